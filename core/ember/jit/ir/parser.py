"""``parse_ir(text) -> Graph``: read the text ``str(graph)`` writes (see ``ember.jit.ir.printer``).

Pass tests are written as IR text, so the parser is lenient where the printer is strict:
whitespace and line breaks are free, ``: Type`` annotations may be left out (``Tensor`` is
assumed), values may be named freely (``%x``, ``%x.1``, ``%3``; names are kept), comments
``# ...`` are ignored except the ``# scope: ...; loc: ...`` the printer writes after a node.
A syntax error raises :class:`IRParseError` with the line, the column and the line itself.

Grammar::

    text      := graph_def ("with" LABEL "=" graph_def)*
    graph_def := "graph" "(" [decl ("," decl)*] ")" ":" node* "return" "(" [uses] ")"
    node      := [decl ("," decl)*] "=" KIND ["[" attr ("," attr)* "]"] "(" [uses] ")" block*
    block     := "blockN" "(" [decl ("," decl)*] ")" ":" node* "->" "(" [uses] ")"
    decl      := %name [":" type]

``parse_type(text)`` reads one type annotation (``Float(2, 3)``, ``int[]``, ``(Tensor, int)``).

Reference: PyTorch's ``torch/csrc/jit/ir/irparser.cpp`` (``parseIR``), own code.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ember.jit.ir import ir_types as T
from ember.jit.ir.attributes import PyObjectRef
from ember.jit.ir.graph import Graph
from ember.ops import namespace as E
from ember.types import all_scalar_types

__all__ = ["parse_ir", "parse_type", "IRParseError"]


class IRParseError(ValueError):
    """The IR text is malformed; the message gives the line, column and what was expected."""


_TOKEN_RE = re.compile(r"""
   (?P<ws>[ \t\r\n]+)
  |(?P<comment>\#[^\n]*)
  |(?P<value>%\w[\w.]*)
  |(?P<string>"(?:[^"\\\n]|\\.)*")
  |(?P<arrow>->)
  |(?P<ellipsis>\.\.\.)
  |(?P<float>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf\b)|nan\b)
  |(?P<int>-?\d+)
  |(?P<qual>[A-Za-z_]\w*::[A-Za-z_][\w.]*)
  |(?P<ident>[A-Za-z_]\w*)
  |(?P<elided><[^<>\n]*>)
  |(?P<punct>[()\[\],:=?*])
""", re.VERBOSE)
_SIMPLE_TYPES = {"int": T.IntType, "float": T.FloatType, "bool": T.BoolType,
                 "NoneType": T.NoneType, "str": T.StringType, "Device": T.DeviceType,
                 "ScalarType": T.ScalarTypeType, "Any": T.AnyType}
_SOURCE_RE = re.compile(r"^#\s*(?:scope:\s*(?P<scope>[^;]*?)\s*(?:;|$))?\s*"
                        r"(?:loc:\s*(?P<loc>.*?))?\s*$")
_LABEL_RE = re.compile(r"^(?P<kind>.+)_(?P<n>\d+)$")
_BLOCK_RE = re.compile(r"^block\d+$")
_DTYPES = {s.name: s for s in all_scalar_types}


def parse_ir(text: str) -> Graph:
    """Parse IR text into a new Graph (see the module docstring for the grammar).

    Raises IRParseError (a ValueError) for malformed text, undefined or twice-defined
    values, and unknown subgraph labels. The result is not linted: call ``g.lint()``.
    """
    return _Parser(text).parse()


def parse_type(text: str) -> T.JitType:
    """Parse one type annotation, e.g. ``Float(2, *, requires_grad=1)`` or ``int[]?``."""
    p = _Parser(text)
    t = p.type()
    p.expect_end()
    return t


class _GraphRef:
    """A label in an attribute value, resolved once every ``with`` section is read."""

    def __init__(self, label: str, tok):
        self.label, self.tok = label, tok


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks: list = []
        self.comments: dict = {}  # line -> comment text
        pos, line, line_start = 0, 1, 0
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if m is None:
                self.error((None, text[pos], line, pos - line_start + 1),
                           "unexpected character")
            kind, s = m.lastgroup, m.group()
            if kind == "comment":
                self.comments[line] = s
            elif kind != "ws":
                self.toks.append((kind, s, line, pos - line_start + 1))
            nl = s.count("\n")
            if nl:
                line, line_start = line + nl, pos + s.rindex("\n") + 1
            pos = m.end()
        self.toks.append(("eof", "end of input", line, pos - line_start + 1))
        self.i = 0

    # -- token helpers ---------------------------------------------------------------------
    def error(self, tok, msg: str):
        _, s, line, col = tok
        lines = self.text.splitlines() or [""]
        src = lines[line - 1] if line <= len(lines) else ""
        raise IRParseError(f"line {line}, column {col}: {msg} (at {s!r})\n  {src}\n  "
                           f"{' ' * (col - 1)}^")

    def peek(self, k: int = 0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, text: str) -> bool:
        kind, s, *_ = self.peek()
        return s == text and kind != "string"

    def take(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str = ""):
        tok = self.peek()
        if not self.at(text):
            self.error(tok, f"expected {what or repr(text)}")
        self.i += 1
        return tok

    def expect_kind(self, kind: str, what: str):
        tok = self.peek()
        if tok[0] != kind:
            self.error(tok, f"expected {what}")
        self.i += 1
        return tok

    def expect_end(self) -> None:
        if self.peek()[0] != "eof":
            self.error(self.peek(), "expected the end of the input")

    def comma_list(self, close: str, item) -> list:
        items = []
        while not self.take(close):
            items.append(item())
            if not self.take(","):
                self.expect(close, f"',' or {close!r}")
                break
        return items

    # -- graphs, blocks, nodes -------------------------------------------------------------
    def parse(self) -> Graph:
        refs: list = []  # (node, attribute name or None for the kind label, holder)
        g = self.graph_def(refs)
        sections: dict = {}
        while self.take("with"):
            tok = self.expect_kind("qual", "a subgraph label such as prim::FusionGroup_0")
            if tok[1] in sections:
                self.error(tok, "subgraph label defined twice")
            self.expect("=")
            sections[tok[1]] = (self.graph_def(refs), tok)
        self.expect_end()
        used = set()
        for node, name, ref in refs:
            if name is None:
                if ref.label in sections:
                    node.kind = _LABEL_RE.match(ref.label).group("kind")
                    node.set_attr("Subgraph", sections[ref.label][0])
                    used.add(ref.label)
                continue
            node.set_attr(name, self.resolve(node._attrs[name], sections, used))
        for label, (_, tok) in sections.items():
            if label not in used:
                self.error(tok, "subgraph defined but never used by a node")
        return g

    def resolve(self, v, sections, used):
        if isinstance(v, _GraphRef):
            if v.label not in sections:
                self.error(v.tok, "undefined subgraph label (no 'with' section defines it)")
            used.add(v.label)
            return sections[v.label][0]
        if isinstance(v, (list, tuple)):
            return type(v)(self.resolve(x, sections, used) for x in v)
        return v

    def graph_def(self, refs) -> Graph:
        g = Graph()
        env: dict = {}
        self.expect("graph", "'graph'")
        self.expect("(")
        self.comma_list(")", lambda: self.decl(env, lambda n, t: g.add_input(n, t)))
        self.expect(":")
        self.body(g, g.block, env, refs, "return")
        return g

    def body(self, g, block, env, refs, end: str) -> None:
        while not self.at(end):
            kind, s, *_ = tok = self.peek()
            if kind != "value" and s != "=":
                self.error(tok, f"expected a node ('%x : T = kind(...)') or {end!r}")
            self.node(g, block, env, refs)
        self.i += 1
        self.expect("(")
        for v in self.comma_list(")", lambda: self.use(env)):
            block.register_output(v)

    def node(self, g, block, env, refs) -> None:
        decls = []
        if not self.at("="):
            decls = self.comma_list("=", lambda: self.decl_pending(env))
        else:
            self.i += 1
        tok = self.peek()
        if tok[0] != "qual":
            self.error(tok, "expected a node kind such as ember::add or prim::Constant")
        self.i += 1
        attrs = self.comma_list("]", self.attr) if self.take("[") else []
        self.expect("(", "'(' and the node's inputs")
        inputs = self.comma_list(")", lambda: self.use(env))
        close_line = self.toks[self.i - 1][2]
        n = g.create(tok[1], inputs, num_outputs=0)
        for name, value in attrs:
            if _has_ref(value):  # a placeholder until the ``with`` sections are read
                n._attrs[name] = value
                refs.append((n, name, None))
            else:
                n.set_attr(name, value)
        if _LABEL_RE.match(tok[1]):
            refs.append((n, None, _GraphRef(tok[1], tok)))
        for name, t in decls:
            env[name] = n.add_output(t, name)
        self.source_info(n, close_line)
        block.append_node(n)
        while self.peek()[0] == "ident" and _BLOCK_RE.match(self.peek()[1]):
            self.i += 1
            b = n.add_block()
            self.expect("(")
            self.comma_list(")", lambda: self.decl(env, lambda nm, t: b.add_input(nm, t)))
            self.expect(":")
            self.body(g, b, env, refs, "->")

    def source_info(self, n, line: int) -> None:
        m = _SOURCE_RE.match(self.comments.get(line, ""))
        if m:
            n.scope = m.group("scope") or None
            n.source_location = m.group("loc") or None

    def decl_pending(self, env):
        tok = self.expect_kind("value", "a value name such as %x")
        name = tok[1][1:]
        if name in env:
            self.error(tok, "value defined twice (IR values are assigned once)")
        t = self.type() if self.take(":") else T.TensorType()
        return name, t

    def decl(self, env, make):
        name, t = self.decl_pending(env)
        env[name] = make(name, t)

    def use(self, env):
        tok = self.expect_kind("value", "a value such as %x")
        if tok[1][1:] not in env:
            self.error(tok, "undefined value (it must be defined before it is used)")
        return env[tok[1][1:]]

    # -- attributes ------------------------------------------------------------------------
    def attr(self):
        tok = self.expect_kind("ident", "an attribute name")
        self.expect("=")
        return tok[1], self.attr_value()

    def attr_value(self) -> Any:
        tok = self.peek()
        kind, s = tok[0], tok[1]
        self.i += 1
        if kind == "int":
            return int(s)
        if kind == "float":
            return float(s)
        if kind == "string":
            return json.loads(s)
        if kind == "qual":
            return _GraphRef(s, tok)
        if s == "[":
            return self.comma_list("]", self.attr_value)
        if s == "(":
            return tuple(self.comma_list(")", self.attr_value))
        if kind == "elided":
            self.error(tok, "an elided tensor constant cannot be parsed back; make it a graph "
                            "input or print a smaller tensor")
        if kind == "ident":
            if s in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[s]
            if s == "device" and self.take("("):
                d = json.loads(self.expect_kind("string", 'a device string "cpu"')[1])
                self.expect(")")
                return E.Device(d)
            if s == "pyobj" and self.take("("):
                name = json.loads(self.expect_kind("string", 'a dotted name "mod.Fn"')[1])
                self.expect(")")
                return PyObjectRef(name)
            if s == "tensor" and self.take("("):
                return self.tensor()
            if s in _DTYPES:
                return _DTYPES[s]
        self.error(tok, "expected an attribute value (number, string, True/False/None, dtype, "
                        "device(...), tensor(...), pyobj(...), list, tuple or subgraph label)")

    def tensor(self):
        data = self.attr_value()
        opts = {"dtype": None, "device": None, "shape": None}
        while self.take(","):
            tok = self.expect_kind("ident", "dtype=, device= or shape=")
            if tok[1] not in opts:
                self.error(tok, "unknown tensor(...) argument; expected dtype, device or shape")
            self.expect("=")
            opts[tok[1]] = self.attr_value()
        self.expect(")")
        t = E.tensor(data, dtype=opts["dtype"], device=opts["device"])
        return t if opts["shape"] is None else t.reshape(opts["shape"])

    # -- types -----------------------------------------------------------------------------
    def type(self) -> T.JitType:
        tok = self.peek()
        self.i += 1
        if tok[1] == "(":
            t = T.TupleType(tuple(self.comma_list(")", self.type)))
        elif tok[1] in _SIMPLE_TYPES and tok[0] == "ident":
            t = _SIMPLE_TYPES[tok[1]]()
        elif tok[0] == "ident" and (tok[1] == "Tensor" or tok[1] in T.TENSOR_TYPE_NAMES):
            t = self.tensor_type(T.TENSOR_TYPE_NAMES.get(tok[1]))
        else:
            self.error(tok, "expected a type (Tensor, Float(2, 3), int, float, bool, str, "
                            "NoneType, Device, ScalarType, Any, (T, ...), T[], T?)")
        while True:
            if self.take("["):
                self.expect("]", "']' (a list type is written T[])")
                t = T.ListType(t)
            elif self.take("?"):
                t = T.OptionalType(t)
            else:
                return t

    def tensor_type(self, dtype) -> T.TensorType:
        if not self.take("("):
            return T.TensorType(dtype)
        sizes: list = []
        known_rank, kw = True, {}
        for item in self.comma_list(")", self.tensor_arg):
            if item == "...":
                known_rank = False
            elif isinstance(item, tuple):
                kw[item[0]] = item[1]
            else:
                sizes.append(item)
        return T.TensorType(dtype, kw.get("device"), None,
                            tuple(sizes) if known_rank else None, kw.get("requires_grad"))

    def tensor_arg(self):
        tok = self.peek()
        self.i += 1
        if tok[0] == "int":
            return int(tok[1])
        if tok[1] in ("*", "..."):
            return None if tok[1] == "*" else "..."
        if tok[1] == "requires_grad" and self.take("="):
            return "requires_grad", bool(int(self.expect_kind("int", "0 or 1")[1]))
        if tok[1] == "device" and self.take("="):
            name = self.expect_kind("ident", "a device such as cpu or cuda:0")[1]
            if self.take(":"):
                name += ":" + self.expect_kind("int", "a device index")[1]
            return "device", name
        self.error(tok, "expected a size, '*', '...', requires_grad= or device=")


def _has_ref(value) -> bool:
    if isinstance(value, _GraphRef):
        return True
    return isinstance(value, (list, tuple)) and any(_has_ref(v) for v in value)
