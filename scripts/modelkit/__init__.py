"""Local-model tooling for svc: converters (numpy + onnx, no torch), the default preset
builder, tiny test models and ONNX Runtime checks. Entry point: scripts/models.py."""
