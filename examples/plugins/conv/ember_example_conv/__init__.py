"""ember-example-conv: a direct 2-D convolution algorithm registered through the
``ember_convolution_algorithms`` hook (entry point ``example_conv``)."""
from .algorithm import TapGemm

__all__ = ["TapGemm"]
