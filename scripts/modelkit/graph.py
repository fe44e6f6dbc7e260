"""A small helper for writing ONNX graphs by hand with onnx.helper."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .files import write_bytes_atomic

OPSET = 17
IR_VERSION = 8

FLOAT = TensorProto.FLOAT
INT32 = TensorProto.INT32
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL


class GraphBuilder:
    """Collects nodes, initializers and graph I/O; every op returns its output name."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._count = 0
        self._consts: dict[tuple, str] = {}

    def _fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_{self._count}"

    def weight(self, name: str, array: np.ndarray) -> str:
        """Adds a float32 initializer named `name`."""
        data = np.ascontiguousarray(array, dtype=np.float32)
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def const(self, value, dtype=np.int64) -> str:
        """A small constant initializer, shared between all users of the same value."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            name = self._fresh("const")
            self.initializers.append(numpy_helper.from_array(array, name))
            self._consts[key] = name
        return self._consts[key]

    def op(self, op_type: str, inputs: list[str], output: str | None = None, domain: str = "", **attrs) -> str:
        """Adds one single-output node; `output` names it, else a fresh name is used."""
        return self.op_multi(op_type, inputs, [output or self._fresh(op_type)], domain=domain, **attrs)[0]

    def op_multi(self, op_type: str, inputs: list[str], outputs: list[str] | int, domain: str = "", **attrs) -> list[str]:
        """Adds one node with several outputs (a list of names, or how many to name freshly);
        `domain` names an operator set other than ONNX's own (e.g. "com.microsoft")."""
        if isinstance(outputs, int):
            outputs = [self._fresh(op_type) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=self._fresh(f"n_{op_type}"), domain=domain, **attrs))
        return outputs

    def add_input(self, name: str, elem_type: int, dims: list) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, dims))
        return name

    def add_output(self, name: str, elem_type: int, dims: list) -> str:
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, dims))
        return name

    def build(self, graph_name: str, producer: str, metadata: dict[str, str] | None = None,
              domains: tuple[str, ...] = ()) -> onnx.ModelProto:
        """domains: the other operator sets the nodes use (version 1 of each)."""
        graph = helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs, self.initializers)
        opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, 1) for d in domains]
        model = helper.make_model(graph, opset_imports=opsets, producer_name=producer)
        model.ir_version = IR_VERSION
        for key, value in (metadata or {}).items():
            model.metadata_props.add(key=key, value=str(value))
        return model


def save_onnx(model: onnx.ModelProto, path) -> None:
    """Checks the model and saves it as ONE self-contained file (no external data; must stay < 2 GB)."""
    onnx.checker.check_model(model)
    write_bytes_atomic(path, model.SerializeToString())
