#!/usr/bin/env python3
"""Real models as users export them: Hugging Face transformers models built
from their configs (random initial weights, torch.manual_seed(0); nothing is
downloaded) and exported with torch.onnx.export, in the pinned test
environment (python/requirements-test.txt: torch 2.15.0, transformers
5.23.0; target/py-venv, made by scripts/pinned-venv.sh).

Usage (in target/py-venv):
  target/py-venv/bin/python onnx/hf_models.py export NAME OUT.onnx [--layers N]
      [--exporter torchscript|dynamo]
NAME is one of (ResNet, MobileNetV2 and ViT at 224x224 batch 1, one input
pixel_values and one output logits; BERT at batch 1, sequence 128, inputs
input_ids and attention_mask (i64), output last_hidden_state):
  resnet18      ResNetForImageClassification, basic blocks, depths 2-2-2-2,
                hidden sizes 64-128-256-512 (ResNet-18's shape)
  resnet50      ResNetForImageClassification, the config's defaults (ResNet-50)
  mobilenet_v2  MobileNetV2ForImageClassification, the config's defaults
                (depth multiplier 1.0, TensorFlow's SAME padding)
  vit_s16       ViTForImageClassification, ViT-S/16: hidden 384, 12 layers (--layers),
                6 heads, FFN 1536, patch 16
  dpt_vits16    DPTForDepthEstimation on a ViT-S/16 backbone (hidden 384, 12
                layers (--layers), 6 heads, FFN 1536), its neck and head: the
                reassembly's ConvTranspose (4x4 and 2x2, strides 4 and 2),
                bilinear Resize (the position embeddings' half_pixel, the
                fusion's align_corners), output predicted_depth [1, 224, 224]
  bert_base     BertModel without the pooler: hidden 768, 12 heads, FFN 3072,
                12 layers (--layers N for fewer), sequence 128
--exporter: torchscript (torch.onnx.export(dynamo=False), the default here)
or dynamo (torch.onnx.export(dynamo=True), with onnxscript; it writes opset
18, and the weights inside the file: external_data=False, since the
importer reads the model file only). The TorchScript export is opset 17.
Run the exported file on the device with onnx/cnn_device.py run (images) or
onnx/minilm_device.py --model (BERT); onnx/hf_device.py does both.
"""
import argparse
import sys

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "vit_s16", "dpt_vits16", "bert_base")


def build(name, layers):
    """The model and its example inputs (a tuple), in eval mode."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    if name == "resnet18":
        cfg = tf.ResNetConfig(layer_type="basic", depths=[2, 2, 2, 2],
                              hidden_sizes=[64, 128, 256, 512], embedding_size=64)
        model = tf.ResNetForImageClassification(cfg)
    elif name == "resnet50":
        model = tf.ResNetForImageClassification(tf.ResNetConfig())
    elif name == "mobilenet_v2":
        model = tf.MobileNetV2ForImageClassification(tf.MobileNetV2Config())
    elif name == "vit_s16":
        cfg = tf.ViTConfig(hidden_size=384, num_hidden_layers=layers, num_attention_heads=6,
                           intermediate_size=1536, image_size=224, patch_size=16)
        model = tf.ViTForImageClassification(cfg)
    elif name == "dpt_vits16":
        cfg = tf.DPTConfig(hidden_size=384, num_hidden_layers=layers, num_attention_heads=6,
                           intermediate_size=1536, image_size=224, patch_size=16,
                           backbone_out_indices=[i * layers // 4 + layers // 4 - 1
                                                 for i in range(4)],
                           neck_hidden_sizes=[48, 96, 192, 384], fusion_hidden_size=64)
        model = tf.DPTForDepthEstimation(cfg)
    else:
        cfg = tf.BertConfig(hidden_size=768, num_hidden_layers=layers, num_attention_heads=12,
                            intermediate_size=3072)
        model = tf.BertModel(cfg, add_pooling_layer=False)
    trained_like(model, he_convs=name == "mobilenet_v2")
    model.eval()
    Logits, Encoder = _wrappers()
    if name == "dpt_vits16":
        return (Logits(model, "predicted_depth"), (torch.randn(1, 3, 224, 224),),
                ["pixel_values"], ["predicted_depth"])
    if name != "bert_base":
        return Logits(model), (torch.randn(1, 3, 224, 224),), ["pixel_values"], ["logits"]
    ids = torch.randint(1000, 30000, (1, 128))
    mask = torch.ones(1, 128, dtype=torch.int64)
    return Encoder(model), (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]


def trained_like(model, he_convs):
    """Statistics and scales in the ranges trained models have, so the
    exported BatchNormalizations (folded into their convs at import) are not
    identities, and convolutions initialised as torchvision does (He normal,
    fan out): transformers' MobileNetV2 initialises its convs with a normal
    of std 0.02, under which its activations shrink to ~1e-22 by the logits,
    too small to compare meaningfully. Same seed, same weights."""
    import torch

    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if he_convs and isinstance(m, torch.nn.Conv2d):
            torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", generator=g)
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.uniform_(-0.1, 0.1, generator=g)
                m.running_mean.uniform_(-0.1, 0.1, generator=g)
                m.running_var.uniform_(0.5, 1.5, generator=g)


def _wrappers():
    # transformers' forward takes keyword arguments and returns a ModelOutput;
    # tracing passes inputs by position, so each model is called by keyword
    # from a small module, as users write for export.
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, model, field="logits"):
            super().__init__()
            self.model = model
            self.field = field

        def forward(self, pixel_values):
            return getattr(self.model(pixel_values=pixel_values), self.field)

    class Encoder(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return Logits, Encoder


def export(name, path, layers, exporter):
    import torch

    model, args, inputs, outputs = build(name, layers)
    with torch.no_grad():
        # The dynamo exporter writes the weights to a second file by default;
        # the importer reads one file only, so they are kept inside it.
        extra = {"external_data": False} if exporter == "dynamo" else {}
        torch.onnx.export(model, args, path, dynamo=exporter == "dynamo", opset_version=17,
                          input_names=inputs, output_names=outputs, **extra)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["export"])
    ap.add_argument("name", choices=MODELS)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12, help="vit_s16, dpt_vits16 and bert_base: encoder layers (dpt_vits16: "
                    "a multiple of 4)")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    a = ap.parse_args(argv)
    if a.layers < 1:
        ap.error("--layers must be at least 1")
    if a.name == "dpt_vits16" and a.layers % 4:
        ap.error("dpt_vits16 reads every fourth layer: --layers must be a multiple of 4")
    export(a.name, a.out, a.layers, a.exporter)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
