"""Unit tests of attnscope.save / attnscope.load (python -m unittest discover -s python/tests).

Values are checked against hand-worked IEEE 754 results; when NumPy / PyTorch are installed, the pure-Python
conversion is also checked against theirs (NumPy's astype, torch's .to(torch.bfloat16))."""

import io
import json
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import attnscope  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def uniform(heads, n, m=None):
    m = n if m is None else m
    return [[[1.0 / m] * m for _ in range(n)] for _ in range(heads)]


class PurePython:
    """Runs a block without NumPy (the pure standard-library path)."""

    def __enter__(self):
        self.saved = attnscope._np
        attnscope._np = None

    def __exit__(self, *exc):
        attnscope._np = self.saved


class SaveTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "a.safetensors")

    def tearDown(self):
        self.dir.cleanup()

    def test_layout(self):
        written = attnscope.save(self.path, [uniform(2, 3)], ["a", "b", "é"], model="toy")
        with open(self.path, "rb") as f:
            data = f.read()
        self.assertEqual(written, len(data))
        (hlen,) = struct.unpack("<Q", data[:8])
        self.assertEqual(hlen % 8, 0)
        header = json.loads(data[8:8 + hlen])
        self.assertEqual(header["attentions.0"], {"dtype": "F32", "shape": [2, 3, 3], "data_offsets": [0, 72]})
        self.assertEqual(json.loads(header["__metadata__"]["tokens"]), ["a", "b", "é"])
        self.assertEqual(header["__metadata__"]["model"], "toy")
        self.assertEqual(len(data), 8 + hlen + 72)

    def test_float32_round_trip_and_batch_index(self):
        batch = [[[[0.1, 0.9], [0.3, 0.7]]], [[[1.0, 0.0], [0.25, 0.75]]]]  # [batch 2, heads 1, 2, 2]
        for pure in (False, True):
            with PurePython() if pure else open(os.devnull):
                attnscope.save(self.path, [batch], ["x", "y"], batch_index=1)
                back = attnscope.load(self.path)
            self.assertEqual(back["layers"][0]["attention"][0], [1, 2, 2])
            self.assertEqual(back["layers"][0]["attention"][1], [1.0, 0.0, 0.25, 0.75])

    def test_float16_and_bfloat16_round_to_nearest_even(self):
        # 1/3: F16 0x3555 = 0.333251953125; BF16 0x3EAB = 0.333984375 (F32 0x3EAAAAAB rounds up)
        # 1 + 2^-8 + 2^-9 ... : 0.5 + 2^-9 exactly halfway between BF16 0.5 and 0.50390625 -> even (0.5)
        rows = [[[1 / 3, 2 / 3], [0.5 + 2 ** -9, 0.25]]]
        expect = {"float16": [0.333251953125, 0.66650390625, 0.5019531250, 0.25],
                  "bfloat16": [0.333984375, 0.66796875, 0.5, 0.25]}
        for dtype, want in expect.items():
            for pure in (False, True):
                with PurePython() if pure else open(os.devnull):
                    attnscope.save(self.path, [rows], ["a", "b"], dtype=dtype)
                self.assertEqual(attnscope.load(self.path)["layers"][0]["attention"][1], want, (dtype, pure))

    @unittest.skipIf(torch is None, "PyTorch not installed")
    def test_torch_tensors_match_torch_rounding(self):
        g = torch.Generator().manual_seed(0)
        a = torch.softmax(torch.randn(2, 3, 5, 5, generator=g), dim=-1)
        for dtype, tdt in (("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float32", torch.float32)):
            for pure in (False, True):
                with PurePython() if pure else open(os.devnull):
                    attnscope.save(self.path, (a, a[:, :1]), list("abcde"), batch_index=1, dtype=dtype)
                back = attnscope.load(self.path)
                self.assertEqual(back["layers"][0]["attention"][1], a[1].to(tdt).double().reshape(-1).tolist())
                self.assertEqual(back["layers"][1]["attention"][0], [1, 5, 5])

    def test_cross_attention(self):
        buf = io.BytesIO()
        attnscope.save(buf, [uniform(1, 2)], ["a", "b"], source_tokens=["x", "y", "z"],
                       cross_attentions=[uniform(2, 2, 3)])
        with open(self.path, "wb") as f:
            f.write(buf.getvalue())
        back = attnscope.load(self.path)
        self.assertEqual(back["source_tokens"], ["x", "y", "z"])
        self.assertEqual(back["layers"][0]["cross"][0], [2, 2, 3])

    def test_errors_name_the_argument(self):
        cases = [
            (dict(attentions=[uniform(1, 3)], tokens=["a", "b"]), "attentions[0] has shape [1, 3, 3]"),
            (dict(attentions=[uniform(1, 2)], tokens="ab"), "tokens must be a list of strings"),
            (dict(attentions=[uniform(1, 2)], tokens=["a", "b"], dtype="int8"), "dtype ('int8') must be one of"),
            (dict(attentions=[], tokens=["a", "b"]), "attentions holds no layers"),
            (dict(attentions=[[[[[1, 0], [0, 1]]]]], tokens=["a", "b"], batch_index=1),
             "batch_index (1) must be from 0 to 0"),
            (dict(attentions=[[[[1, 0], [0]]]], tokens=["a", "b"]), "attentions[0][0][1] must be a list of 2"),
            (dict(attentions=[[[[1, "x"], [0, 1]]]], tokens=["a", "b"]), "attentions[0][0][0][1] must be a number"),
            (dict(attentions=[uniform(1, 2)], tokens=["a", "b"], cross_attentions=[uniform(1, 2, 3)]),
             "source_tokens must be a list of strings"),
            (dict(attentions=[uniform(1, 2)], tokens=["a", "b"], source_tokens=["x"],
                  cross_attentions=[uniform(1, 2, 3)]), "cross_attentions[0] has shape [1, 2, 3]"),
        ]
        for kwargs, message in cases:
            with self.assertRaises(ValueError, msg=message) as ctx:
                attnscope.save(self.path, **kwargs)
            self.assertIn("attnscope.save: " + message, str(ctx.exception))


class ShowTest(unittest.TestCase):
    LAYER = [[[0.75, 0.25], [0.5, 0.5]], [[0.25, 0.75], [1.0, 0.0]]]  # [heads 2, 2, 2]

    def cells(self, text):
        import re
        return re.findall(r'fill="(#[0-9a-f]{6})"><title>(.*?) \u2192 (.*?): ([0-9.]+)</title>', text)

    def test_mean_head_and_escaping(self):
        h = attnscope.show([self.LAYER], ["<a>", "b&"], head="mean")
        self.assertEqual(h._repr_html_(), h.html)
        cells = self.cells(h.html)
        self.assertEqual([float(c[3]) for c in cells], [0.5, 0.5, 0.75, 0.25])
        self.assertEqual(cells[0][1:3], ("&lt;a&gt;", "&lt;a&gt;"))
        self.assertNotIn("<a>", h.html)
        self.assertEqual(cells[2][0], "#fde725")  # the largest weight: viridis' top
        one = self.cells(attnscope.show([self.LAYER], ["a", "b"], head=1).html)
        self.assertEqual([float(c[3]) for c in one], [0.25, 0.75, 1.0, 0.0])
        self.assertEqual(one[3][0], "#440154")  # zero: viridis' bottom

    @unittest.skipUnless(os.path.exists(os.path.join(os.path.dirname(attnscope.__file__), "viewer", "viewer.js")),
                         "the notebook viewer is not built (node scripts/build-notebook.mjs)")
    def test_interactive_cross_data(self):
        # the viewer's data carries the source tokens and each layer's cross weights as float32 [heads, n, m]
        import base64
        h = attnscope.show([uniform(1, 2)], ["a", "b"], source_tokens=["x", "y", "z"],
                           cross_attentions=[[[[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]]])
        data = json.loads(h.html[h.html.rindex("attnscopeNotebook.show("):].split(", ", 1)[1].rsplit(");", 1)[0])
        self.assertEqual(data["sourceTokens"], ["x", "y", "z"])
        raw = base64.b64decode(data["cross"][0])
        self.assertEqual(list(struct.unpack("<6f", raw)), [0.5, 0.25, 0.25, 0.0, 0.0, 1.0])
        with self.assertRaisesRegex(ValueError, r"attnscope.show: cross_attentions has 2 layers, attentions 1"):
            attnscope.show([uniform(1, 2)], ["a", "b"], source_tokens=["x"], cross_attentions=[uniform(1, 2, 1)] * 2)

    def test_cross_and_errors(self):
        h = attnscope.show([uniform(1, 2)], ["a", "b"], source_tokens=["x", "y", "z"],
                           cross_attentions=[uniform(1, 2, 3)], head=0)
        self.assertEqual(len(self.cells(h.html)), 6)
        with self.assertRaisesRegex(ValueError, r"attnscope.show: head \(2\) must be 'mean' or a head index from 0 to 1"):
            attnscope.show([self.LAYER], ["a", "b"], head=2)
        with self.assertRaisesRegex(ValueError, r"attnscope.show: layer \(1\) must be an integer from -1 to 0"):
            attnscope.show([self.LAYER], ["a", "b"], layer=1)


if __name__ == "__main__":
    unittest.main()
