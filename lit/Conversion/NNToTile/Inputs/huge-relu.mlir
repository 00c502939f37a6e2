// The hang input of issue 13: a relu over 1e11 rows on test16 is refused by the
// memory-fit check before any exchange is scheduled (it used to run > 60 s).
func.func @main(%x: tensor<99999999999x32xf16> {ipu.name = "x"}) -> (tensor<99999999999x32xf16> {ipu.name = "y"}) {
  %y = nn.relu %x : tensor<99999999999x32xf16>
  return %y : tensor<99999999999x32xf16>
}
