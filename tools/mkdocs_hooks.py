"""MkDocs hook: load every command family before mkdocs-click reads the command tree.

The root group imports a family's module only when it is used (so `accelperf measure`
does not wait for SciPy); mkdocs-click reads ``group.commands`` directly, which would then
hold only `demo`. Asking the group for each family registers them all."""
import click


def on_config(config, **kwargs):
    from accelperf.cli.app import cli
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        cli.get_command(ctx, name)
    return config
