// Test wrapper for ultraembedded/core_jpeg (not part of the core): instantiates jpeg_core
// and brings the handshakes between its units out as ports, so the C++ driver can time
// each block as it leaves the entropy decoder, the IDCT and the colour-conversion stage.
// The simulator resolves the hierarchical references into the core; the core is not changed.
module tb_core_jpeg
(
     input           clk_i
    ,input           rst_i
    ,input           inport_valid_i
    ,input  [ 31:0]  inport_data_i
    ,input  [  3:0]  inport_strb_i
    ,input           inport_last_i
    ,output          inport_accept_o
    ,output          outport_valid_o
    ,output [ 15:0]  outport_width_o
    ,output [ 15:0]  outport_height_o
    ,output [ 15:0]  outport_pixel_x_o
    ,output [ 15:0]  outport_pixel_y_o
    ,output [  7:0]  outport_pixel_r_o
    ,output [  7:0]  outport_pixel_g_o
    ,output [  7:0]  outport_pixel_b_o
    ,output          idle_o
    // first compressed byte handed to the bit buffer (the header has been parsed)
    ,output          scan_byte_o
    // a block's last coefficient leaves the Huffman/MCU decoder (jpeg_mcu_proc)
    ,output          entropy_eob_o
    ,output [  1:0]  entropy_type_o
    // a transformed block's last sample (index 63) enters the output stage
    ,output          idct_block_o
    ,output [  1:0]  idct_type_o
);

jpeg_core u_core
(
     .clk_i(clk_i)
    ,.rst_i(rst_i)
    ,.inport_valid_i(inport_valid_i)
    ,.inport_data_i(inport_data_i)
    ,.inport_strb_i(inport_strb_i)
    ,.inport_last_i(inport_last_i)
    ,.outport_accept_i(1'b1)   // ideal sink: every pixel is taken the cycle it is offered
    ,.inport_accept_o(inport_accept_o)
    ,.outport_valid_o(outport_valid_o)
    ,.outport_width_o(outport_width_o)
    ,.outport_height_o(outport_height_o)
    ,.outport_pixel_x_o(outport_pixel_x_o)
    ,.outport_pixel_y_o(outport_pixel_y_o)
    ,.outport_pixel_r_o(outport_pixel_r_o)
    ,.outport_pixel_g_o(outport_pixel_g_o)
    ,.outport_pixel_b_o(outport_pixel_b_o)
    ,.idle_o(idle_o)
);

assign scan_byte_o    = u_core.bb_inport_valid_w && u_core.bb_inport_accept_w;
assign entropy_eob_o  = u_core.dqt_inport_eob_w;
assign entropy_type_o = u_core.dqt_inport_id_w[31:30];
// (the output stage pushes on valid alone; its accept is a level 'has space' flag)
assign idct_block_o   = u_core.output_inport_valid_w && u_core.output_inport_idx_w == 6'd63;
assign idct_type_o    = u_core.output_inport_id_w[31:30];

endmodule
