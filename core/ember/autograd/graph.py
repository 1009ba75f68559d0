"""``ember.autograd.graph``: the graph's public types, under PyTorch's module name."""
from .function import Edge, Node, RemovableHandle

__all__ = ["Edge", "Node", "RemovableHandle"]
