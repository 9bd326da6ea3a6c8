"""Save attention weights as an attnscope attention file (the repository's API.md, "Attention files").

    import attnscope
    out = model(**enc, output_attentions=True)
    attnscope.save("gpt2.attn.safetensors", out.attentions, tokenizer.convert_ids_to_tokens(enc.input_ids[0]),
                   model="gpt2")

The file is safetensors: tensors ``attentions.<i>`` ``[heads, n, n]`` (and ``cross_attentions.<i>`` ``[heads, n, m]``),
``__metadata__`` ``tokens`` / ``source_tokens`` as JSON arrays and ``model``. attnscope's page, its npm module
(``as.readAttentionFile``) and its CLI (``npx attnscope heatmap --attention-file FILE``) read it.

Pure standard library: PyTorch tensors and NumPy arrays are accepted when those packages are installed (and NumPy,
when present, makes the conversion fast); nested lists always work.
"""

import base64
import html
import json
import math
import os
import struct
import uuid
import warnings

__all__ = ["save", "load", "show", "DTYPES"]

#: dtype name -> safetensors dtype and bytes per value
DTYPES = {"float32": ("F32", 4), "float16": ("F16", 2), "bfloat16": ("BF16", 2)}
_NAMES = {v[0]: k for k, v in DTYPES.items()}
_MAX_HEADER = 100_000_000  # the safetensors reference implementation's MAX_HEADER_SIZE

try:  # optional: fast conversion
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where NumPy is absent
    _np = None


def _fail(message):
    raise ValueError("attnscope.save: " + message)


def _to_nested(x, what):
    """A tensor-like (torch.Tensor, numpy.ndarray, nested lists/tuples of numbers) as (shape, flat list of floats)."""
    if hasattr(x, "detach"):  # torch.Tensor: float64 on the CPU keeps every float32/float16/bfloat16 value exactly
        x = x.detach().to("cpu").double()
        if _np is not None:
            x = x.numpy()
        else:
            return list(x.shape), [float(v) for v in x.reshape(-1).tolist()]
    if _np is not None and isinstance(x, _np.ndarray):
        return list(x.shape), x.astype(_np.float64).reshape(-1)
    shape = []
    probe = x
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat = []

    def walk(v, depth, path):
        if depth == len(shape):
            if isinstance(v, (list, tuple)):
                _fail("%s%s is nested deeper than %s" % (what, path, shape))
            if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
                _fail("%s%s must be a number, got %s" % (what, path, type(v).__name__))
            flat.append(float(v))
            return
        if not isinstance(v, (list, tuple)) or len(v) != shape[depth]:
            _fail("%s%s must be a list of %d entries (the shape is %s), got %r" % (
                what, path, shape[depth], shape, type(v).__name__ if not isinstance(v, (list, tuple)) else len(v)))
        for i, item in enumerate(v):
            walk(item, depth + 1, "%s[%d]" % (path, i))

    walk(x, 0, "")
    return shape, flat


def _layer(x, what, batch_index, rows, cols, cols_name):
    """One layer as (heads, flat values [heads, rows, cols]); 4-D input is [batch, heads, rows, cols]."""
    shape, flat = _to_nested(x, what)
    if len(shape) == 4:
        if not 0 <= batch_index < shape[0]:
            _fail("batch_index (%d) must be from 0 to %d (%s has batch size %d)" % (
                batch_index, shape[0] - 1, what, shape[0]))
        per = shape[1] * shape[2] * shape[3]
        flat = flat[batch_index * per:(batch_index + 1) * per]
        shape = shape[1:]
    if len(shape) != 3 or shape[1] != rows or shape[2] != cols or shape[0] < 1:
        _fail("%s has shape %s; expected [batch, heads, %d, %d] or [heads, %d, %d] (%d tokens, %d %s)" % (
            what, shape, rows, cols, rows, cols, rows, cols, cols_name))
    return shape[0], flat


def _cross(cross_attentions, source_tokens, count, batch_index, n):
    """(source tokens, [(heads, flat [heads, n, m])] per layer) of the cross-attentions, checked against count layers."""
    source_tokens = _tokens(source_tokens, "source_tokens")
    cross = list(cross_attentions)
    if len(cross) != count:
        _fail("cross_attentions has %d layers, attentions %d" % (len(cross), count))
    return source_tokens, [_layer(c, "cross_attentions[%d]" % i, batch_index, n, len(source_tokens), "source tokens")
                           for i, c in enumerate(cross)]


def _bf16_bits(bits):
    """float32 bits -> bfloat16 bits, rounded to nearest even (as torch's .to(torch.bfloat16)); NaN stays NaN."""
    if (bits & 0x7F800000) == 0x7F800000 and (bits & 0x7FFFFF):
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _encode(flat, dtype):
    """Little-endian bytes of the values in dtype (F32/F16 rounded to nearest even, BF16 from F32 likewise)."""
    if _np is not None:
        a = _np.asarray(flat, dtype=_np.float64)
        if dtype == "F32":
            return a.astype("<f4").tobytes()
        if dtype == "F16":
            return a.astype("<f2").tobytes()
        b = a.astype("<f4").view("<u4").astype(_np.uint64)
        nan = _np.isnan(a)
        r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
        r[nan] = (b[nan] >> 16) | 0x40
        return r.astype("<u2").tobytes()
    n = len(flat)
    if dtype == "F32":
        return struct.pack("<%df" % n, *flat)
    if dtype == "F16":
        return struct.pack("<%de" % n, *flat)
    bits = struct.unpack("<%dI" % n, struct.pack("<%df" % n, *flat))
    return struct.pack("<%dH" % n, *(_bf16_bits(b) for b in bits))


def _tokens(value, what):
    if value is None or isinstance(value, str) or not all(isinstance(t, str) for t in value):
        _fail("%s must be a list of strings (one per position)" % what)
    value = list(value)
    if not value:
        _fail("%s must hold at least one token" % what)
    return value


def save(path, attentions, tokens, source_tokens=None, model=None, batch_index=0, cross_attentions=None,
         dtype="float32"):
    """Writes an attention file to ``path`` (a file name or a binary file object).

    attentions: one entry per layer (Hugging Face ``outputs.attentions``: a tuple of ``[batch, heads, n, n]``
    tensors), each a torch tensor, NumPy array or nested lists, ``[batch, heads, n, n]`` or ``[heads, n, n]``; the
    head count may differ between layers. tokens: the n tokens. cross_attentions (encoder-decoder models'
    ``outputs.cross_attentions``): one ``[batch, heads, n, m]`` entry per layer, with source_tokens (the m encoder
    tokens). batch_index picks the sequence of a batch. dtype: 'float32' (default), 'float16' or 'bfloat16'.
    Returns the number of bytes written.
    """
    if dtype not in DTYPES:
        _fail("dtype (%r) must be one of %s" % (dtype, ", ".join(DTYPES)))
    st_dtype, size = DTYPES[dtype]
    if isinstance(batch_index, bool) or not isinstance(batch_index, int):
        _fail("batch_index must be an integer")
    tokens = _tokens(tokens, "tokens")
    n = len(tokens)
    if attentions is None or hasattr(attentions, "shape") and len(attentions.shape) != 5:
        _fail("attentions must be a sequence of per-layer tensors (outputs.attentions)")
    layers = list(attentions)
    if not layers:
        _fail("attentions holds no layers")
    meta = {"tokens": json.dumps(tokens, ensure_ascii=False)}
    tensors = []
    for i, a in enumerate(layers):
        heads, flat = _layer(a, "attentions[%d]" % i, batch_index, n, n, "keys")
        tensors.append(("attentions.%d" % i, [heads, n, n], flat))
    if cross_attentions is not None:
        source_tokens, cross = _cross(cross_attentions, source_tokens, len(layers), batch_index, n)
        m = len(source_tokens)
        for i, (heads, flat) in enumerate(cross):
            tensors.append(("cross_attentions.%d" % i, [heads, n, m], flat))
    if source_tokens is not None:
        meta["source_tokens"] = json.dumps(_tokens(source_tokens, "source_tokens"), ensure_ascii=False)
    if model is not None:
        if not isinstance(model, str):
            _fail("model must be a string (the model's name)")
        meta["model"] = model

    header = {"__metadata__": meta}
    offset = 0
    for name, shape, flat in tensors:
        nbytes = len(flat) * size
        header[name] = {"dtype": st_dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # padded to 8 bytes, as the reference writer does
    chunks = [struct.pack("<Q", len(text)), text] + [_encode(flat, st_dtype) for _, _, flat in tensors]
    if hasattr(path, "write"):
        for c in chunks:
            path.write(c)
    else:
        with open(path, "wb") as f:
            for c in chunks:
                f.write(c)
    return sum(len(c) for c in chunks)


def load(path):
    """Reads an attention file back: {"tokens", "source_tokens", "model", "layers": [{"attention": (shape, values),
    "cross": (shape, values) or None}]} with values as Python floats (for tests and scripts; no checks beyond the
    format's)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("attnscope.load: %s is shorter than 8 bytes" % path)
    (hlen,) = struct.unpack("<Q", data[:8])
    if hlen > _MAX_HEADER or 8 + hlen > len(data):
        raise ValueError("attnscope.load: %s has a header length (%d) beyond the file" % (path, hlen))
    header = json.loads(data[8:8 + hlen].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    base = 8 + hlen

    def tensor(name):
        e = header.get(name)
        if e is None:
            return None
        a, b = e["data_offsets"]
        raw = data[base + a:base + b]
        count = math.prod(e["shape"])
        if e["dtype"] == "F32":
            vals = struct.unpack("<%df" % count, raw)
        elif e["dtype"] == "F16":
            vals = struct.unpack("<%de" % count, raw)
        else:
            bits = struct.unpack("<%dH" % count, raw)
            vals = struct.unpack("<%df" % count, struct.pack("<%dI" % count, *(b << 16 for b in bits)))
        return e["shape"], list(vals), _NAMES[e["dtype"]]

    layers = []
    i = 0
    while "attentions.%d" % i in header:
        layers.append({"attention": tensor("attentions.%d" % i), "cross": tensor("cross_attentions.%d" % i)})
        i += 1
    return {
        "tokens": json.loads(meta["tokens"]),
        "source_tokens": json.loads(meta["source_tokens"]) if "source_tokens" in meta else None,
        "model": meta.get("model"),
        "layers": layers,
    }



# viridis at 9 evenly spaced stops (matplotlib's _viridis_data at indices 0, 32, ..., 224, 255), linearly
# interpolated: the page's and the CLI's default palette, so a notebook figure reads like theirs
_VIRIDIS = [(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141), (39, 173, 129),
            (92, 200, 99), (170, 220, 50), (253, 231, 37)]


def _colour(t):
    t = min(1.0, max(0.0, t)) * (len(_VIRIDIS) - 1)
    i = min(int(t), len(_VIRIDIS) - 2)
    f = t - i
    a, b = _VIRIDIS[i], _VIRIDIS[i + 1]
    return "#%02x%02x%02x" % tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))


class AttentionHTML:
    """What show() returns: Jupyter displays it through _repr_html_; .html is the same text."""

    def __init__(self, text):
        self.html = text

    def _repr_html_(self):
        return self.html

    def __str__(self):
        return self.html


def show(attentions, tokens, layer=0, head="mean", source_tokens=None, cross_attentions=None, batch_index=0,
         cell=18, interactive=True, lang="en", width=900):
    """attnscope's views of the attentions as notebook HTML. With interactive (the default) the output cell runs
    attnscope's own page code, bundled for notebooks (attnscope/viewer/viewer.js, built by the repository's
    scripts/build-notebook.mjs): the attention view with layer tabs and head chips, per-head heatmaps and lines,
    mean / max over heads (head='mean' starts on the mean) and the model view of every layer x head. It runs
    offline and makes no request. The static heatmap below stays as what a viewer that runs no script shows.

    The static heatmap (an inline SVG, no script): one layer, queries down, keys across, viridis scaled to the shown
    matrix's largest weight, each cell's weight in its tooltip. head: a head index or 'mean' (over the layer's heads).
    With cross_attentions (and source_tokens) the static heatmap shows the cross-attention, and the interactive view
    draws it under each layer's self-attention (target x source maps and lines) and as its own model-view grid, as
    the page draws an attention file's. lang: 'en' or 'zh-CN'.
    Arguments as save()'s; attention files are read with load() and shown from its layers' values."""
    try:
        static = _show(attentions, tokens, layer, head, source_tokens, cross_attentions, batch_index, cell)
        if not interactive:
            return static
        return _interactive(static, attentions, tokens, layer, head, batch_index, lang, width, source_tokens,
                            cross_attentions)
    except ValueError as e:  # the shared checks speak for save(): name the function called
        raise ValueError(str(e).replace("attnscope.save: ", "attnscope.show: ", 1)) from None


_VIEWER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "viewer")


def _interactive(static, attentions, tokens, layer, head, batch_index, lang, width, source_tokens=None,
                 cross_attentions=None):
    """The viewer's script and the data around the static heatmap (which the script's shadow root covers)."""
    try:
        with open(os.path.join(_VIEWER, "viewer.js"), encoding="utf-8") as f:
            script = f.read()
        with open(os.path.join(_VIEWER, "viewer.css"), encoding="utf-8") as f:
            css = f.read()
    except OSError:
        warnings.warn("attnscope.show: the notebook viewer is not built (run `node scripts/build-notebook.mjs` in "
                      "the attnscope repository, then `pip install ./python`): showing the static heatmap only")
        return static
    if lang not in ("en", "zh-CN"):
        _fail("lang (%r) must be 'en' or 'zh-CN'" % (lang,))
    tokens = _tokens(tokens, "tokens")
    n = len(tokens)
    layers = []
    for i, a in enumerate(list(attentions)):
        heads, flat = _layer(a, "attentions[%d]" % i, batch_index, n, n, "keys")
        layers.append(base64.b64encode(_encode(flat, "F32")).decode("ascii"))
    data = {"tokens": tokens, "layers": layers, "layer": layer % len(layers), "lang": lang, "width": int(width),
            "agg": "mean" if head == "mean" else "heads", "heads": "all" if head == "mean" else [head], "css": css}
    if cross_attentions is not None:
        data["sourceTokens"], cross = _cross(cross_attentions, source_tokens, len(layers), batch_index, n)
        data["cross"] = [base64.b64encode(_encode(flat, "F32")).decode("ascii") for _, flat in cross]
    uid = "attnscope-%s" % uuid.uuid4().hex
    safe = lambda text: text.replace("</", "<\\/")  # noqa: E731  (no "</script>" inside the script)
    return AttentionHTML(
        '<div class="attnscope-show" id="%s">%s</div><script>%s\n;attnscopeNotebook.show(document.getElementById("%s"), %s);</script>'
        % (uid, static.html, safe(script), uid, json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")))


def _show(attentions, tokens, layer, head, source_tokens, cross_attentions, batch_index, cell):
    keys_tokens = tokens
    stack = attentions
    if cross_attentions is not None:
        stack, keys_tokens = cross_attentions, _tokens(source_tokens, "source_tokens")
    tokens = _tokens(tokens, "tokens")
    layers = list(stack)
    if isinstance(layer, bool) or not isinstance(layer, int) or not -len(layers) <= layer < len(layers):
        _fail("layer (%r) must be an integer from %d to %d" % (layer, -len(layers), len(layers) - 1))
    n, m = len(tokens), len(keys_tokens)
    heads, flat = _layer(layers[layer], "layer %d" % layer, batch_index, n, m, "keys")
    flat = [float(v) for v in flat]
    if head == "mean":
        values = [sum(flat[h * n * m + k] for h in range(heads)) / heads for k in range(n * m)]
        what = "mean over %d heads" % heads
    elif isinstance(head, int) and not isinstance(head, bool) and 0 <= head < heads:
        values = flat[head * n * m:(head + 1) * n * m]
        what = "head %d" % head
    else:
        _fail("head (%r) must be 'mean' or a head index from 0 to %d" % (head, heads - 1))
    hi = max(values) or 1.0
    label = 8 * max(len(t) for t in tokens + list(keys_tokens)) + 8
    width, height = label + m * cell, label + n * cell
    esc = html.escape
    out = ['<div class="attnscope-show"><svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (width, height),
           '<title>layer %d, %s</title>' % (layer % len(layers), what)]
    for j, t in enumerate(keys_tokens):
        x = label + j * cell + cell / 2
        out.append('<text transform="translate(%g,%d) rotate(-90)" dominant-baseline="middle">%s</text>' % (
            x, label - 4, esc(t)))
    for i, t in enumerate(tokens):
        y = label + i * cell + cell / 2
        out.append('<text x="%d" y="%g" text-anchor="end" dominant-baseline="middle">%s</text>' % (
            label - 4, y, esc(t)))
        for j in range(m):
            v = values[i * m + j]
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s \u2192 %s: %.4f</title></rect>' % (
                label + j * cell, label + i * cell, cell, cell, _colour(v / hi), esc(t), esc(keys_tokens[j]), v))
    out.append("</svg></div>")
    return AttentionHTML("".join(out))
