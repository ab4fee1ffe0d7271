/* A marking's tokens into the compiled engine's int64 array, at C speed.
 *
 * accelperf/lpn/compiled.py appends this file to every net's engine and calls
 * lpn_flatten through ctypes.PyDLL (the GIL is held, as the C API requires) with each
 * place's list or tuple of property tuples: the conversion is part of every run, and in Python it
 * cost as much as a third of one. Only functions of CPython's stable ABI are called,
 * declared here rather than taken from Python.h, so no Python headers are needed: the
 * symbols are resolved against the running interpreter when the library is loaded.
 * Anything unexpected (a token that is not a tuple of `stride` ints, a value outside
 * int64) returns its index and leaves no Python error set; the caller then takes the
 * Python path, which says what is wrong in the project's words.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct _object PyObject;                  /* opaque: only used through calls */
typedef ptrdiff_t Py_ssize_t;
extern PyObject *PyList_GetItem(PyObject *list, Py_ssize_t i);
extern Py_ssize_t PyTuple_Size(PyObject *tuple);
extern PyObject *PyTuple_GetItem(PyObject *tuple, Py_ssize_t i);
extern long long PyLong_AsLongLongAndOverflow(PyObject *v, int *overflow);
extern PyObject *PyErr_Occurred(void);
extern void PyErr_Clear(void);

/* The n tuples of `tokens` (a list when is_list, else a tuple) flattened into
 * out[n * stride]: -1 when done, else the index of the first token it cannot convert. */
Py_ssize_t lpn_flatten(PyObject *tokens, int is_list, Py_ssize_t n, Py_ssize_t stride,
                       int64_t *out) {
    PyObject *(*item)(PyObject *, Py_ssize_t) = is_list ? PyList_GetItem : PyTuple_GetItem;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *tok = item(tokens, i);
        if (!tok || PyTuple_Size(tok) != stride) { PyErr_Clear(); return i; }
        for (Py_ssize_t k = 0; k < stride; k++) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(PyTuple_GetItem(tok, k), &overflow);
            if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return i; }
            *out++ = v;
        }
    }
    return -1;
}
