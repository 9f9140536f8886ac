"""The BERT graph of all-MiniLM-L6-v2 written with onnx.helper from the safetensors arrays
(no torch export), for the embedder in memories/search/embeddings.py to run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# Opset 20 is the first with a Gelu op; IR version 9 is the one released with it, so
# onnxruntime >= 1.17 can load the graph.
_OPSET = 20
_IR_VERSION = 9


class _Graph:
    """Collects ONNX nodes and initializers; each op's output gets a fresh name.

    Weights are declared as external data and handed to onnxruntime as numpy arrays
    (add_external_initializers) instead of bytes inside the protobuf. Putting 90 MB
    through TensorProtos, the GraphProto, the ModelProto and the serialized bytes took
    ~0.7 s and a 470 MB peak; this way the graph (~17 KB) is built and serialized in
    ~15 ms, so there is nothing worth caching on disk.
    """

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper = helper
        self._numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.weights: dict[str, np.ndarray] = {}

    def const(self, value: Any) -> str:
        """A small constant (shape, axis, scalar), stored inside the graph."""
        name = f"const{len(self.initializers)}"
        self.initializers.append(self._numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name: str, value: np.ndarray) -> str:
        """A float32 weight tensor, stored outside the graph (see the class docstring)."""
        from onnx import TensorProto

        array = np.ascontiguousarray(value, np.float32)
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value="in-memory")
        self.initializers.append(tensor)
        self.weights[name] = array
        return name

    def op(self, op_type: str, *inputs: str, output: str = "", **attributes: Any) -> str:
        output = output or f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(self._helper.make_node(op_type, list(inputs), [output], **attributes))
        return output


def _build_onnx_model(
    w: dict[str, np.ndarray], *, heads: int, layers: int, eps: float
) -> tuple[Any, dict[str, np.ndarray]]:
    """The BERT encoder plus mean pooling and L2 normalization as an onnx.ModelProto.

    Inputs: input_ids and attention_mask, int64 (batch, seq). Output: embedding,
    float32 (batch, hidden), unit rows. The arithmetic is BertModel's, with mean pooling.
    Also returns the weights the model refers to as external data, by name.
    """
    from onnx import TensorProto, helper

    g = _Graph()
    f32 = np.float32
    w = dict(w)  # fused and folded tensors are added under names of their own
    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    head_dim = hidden // heads

    def param(name: str) -> str:
        return g.weight(name, w[name])

    def dense(x: str, name: str) -> str:
        # Gemm takes torch Linear's (out, in) weights as they are (transB) and adds the
        # bias as it writes its output: no transposed copy, no separate Add pass.
        weight, bias = param(f"{name}.weight"), param(f"{name}.bias")
        return g.op("Gemm", x, weight, bias, transB=1)

    def layer_norm(x: str, name: str) -> str:
        weight, bias = param(f"{name}.weight"), param(f"{name}.bias")
        return g.op("LayerNormalization", x, weight, bias, axis=-1, epsilon=eps)

    # Single-segment input: every token has type 0, so that embedding row is folded
    # into the position table.
    w["embeddings.position_embeddings.weight"] = (
        w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    )
    seq_len = g.op("Shape", "input_ids", start=1, end=2)
    zero = g.const(np.array([0], np.int64))
    words = g.op("Gather", param("embeddings.word_embeddings.weight"), "input_ids")
    positions = g.op("Slice", param("embeddings.position_embeddings.weight"), zero, seq_len, zero)
    x = layer_norm(g.op("Add", words, positions), "embeddings.LayerNorm")
    # Token-wise work runs on (batch * seq, hidden) rows, the 2-D shape Gemm needs;
    # attention and pooling view them per sentence again.
    rows_shape = g.const(np.array([-1, hidden], np.int64))
    x = g.op("Reshape", x, rows_shape)

    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    # Additive mask: padded keys get a huge negative score so softmax gives them ~0
    # weight (the same finfo.min masking transformers uses). Shape (batch, 1, 1, seq).
    key_bias = g.op("Mul", g.op("Sub", g.const(f32(1.0)), mask), g.const(np.finfo(f32).min))
    key_bias = g.op("Unsqueeze", key_bias, g.const(np.array([1, 2], np.int64)))

    def per_sentence(*dims: int) -> str:
        before, after = g.const(np.array([-1], np.int64)), g.const(np.array(dims, np.int64))
        return g.op("Concat", before, seq_len, after, axis=0)

    qkv_shape = per_sentence(3, heads, head_dim)
    q_k_v = [g.const(np.int64(j)) for j in range(3)]
    # Folding 1/sqrt(head_dim) into the query projection saves a Mul per layer.
    qkv_scale = np.array([1.0 / math.sqrt(head_dim), 1.0, 1.0], f32).repeat(hidden)

    for i in range(layers):
        p = f"encoder.layer.{i}."
        # One GEMM for q, k and v instead of three small ones.
        parts = [f"{p}attention.self.{n}" for n in ("query", "key", "value")]
        for kind, scale in (("weight", qkv_scale[:, None]), ("bias", qkv_scale)):
            fused = np.concatenate([w[f"{n}.{kind}"] for n in parts])
            w[f"{p}attention.qkv.{kind}"] = fused * scale
        qkv = g.op("Reshape", dense(x, f"{p}attention.qkv"), qkv_shape)
        # q, k and v become (batch, heads, seq, head_dim); k is transposed for q @ k^T.
        q, k_t, v = (
            g.op("Transpose", g.op("Gather", qkv, j, axis=2), perm=perm)
            for j, perm in zip(q_k_v, ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]), strict=True)
        )
        probs = g.op("Softmax", g.op("Add", g.op("MatMul", q, k_t), key_bias), axis=-1)
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, rows_shape)
        x = g.op("Add", x, dense(context, f"{p}attention.output.dense"))
        x = layer_norm(x, f"{p}attention.output.LayerNorm")
        inner = g.op("Gelu", dense(x, f"{p}intermediate.dense"), approximate="none")
        x = layer_norm(g.op("Add", x, dense(inner, f"{p}output.dense")), f"{p}output.LayerNorm")

    # Mean pooling over real tokens as a batched (1 x seq) @ (seq x hidden) matmul.
    axis1 = g.const(np.array([1], np.int64))
    x = g.op("Reshape", x, per_sentence(hidden))
    summed = g.op("Squeeze", g.op("MatMul", g.op("Unsqueeze", mask, axis1), x), axis1)
    counts = g.op("Max", g.op("ReduceSum", mask, axis1, keepdims=1), g.const(f32(1e-9)))
    mean = g.op("Div", summed, counts)
    norm = g.op("Max", g.op("ReduceL2", mean, axis1, keepdims=1), g.const(f32(1e-12)))
    g.op("Div", mean, norm, output="embedding")

    def tensor(name: str, dtype: int, shape: list[str | int]) -> Any:
        return helper.make_tensor_value_info(name, dtype, shape)

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [tensor(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask")],
        [tensor("embedding", TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="echo-memory"
    )
    model.ir_version = _IR_VERSION
    return model, g.weights
