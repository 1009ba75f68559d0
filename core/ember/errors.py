"""ember's typed errors. Each subclasses the builtin a PyTorch user would catch
(``RuntimeError``) and the one that names the kind of mistake (``TypeError``, ...)."""


class NoBackendError(RuntimeError):
    """No backend plugin is installed or enabled; the message says what to install."""


class DeviceMismatchError(RuntimeError, ValueError):
    """Tensors of one op live on different devices."""


class DtypeError(RuntimeError, TypeError):
    """A result dtype cannot be stored where it was asked to go (in-place, ``out=``)."""


class ShapeError(RuntimeError, ValueError):
    """Shapes do not broadcast or do not match what an op needs."""


class PluginError(RuntimeError):
    """A plugin returned something the core cannot use; raised inside the manager, which
    turns it into a warning and skips the plugin."""


class PluginUnavailable(ImportError):
    """Raised by a plugin (on import or from a hook) that cannot work on this machine: no
    GPU, no driver, an optional dependency not installed. The manager registers nothing
    from it and shows the message in ``ember plugins`` as ``[unavailable]``, without the
    warning a faulty plugin gets: it is expected on machines without the hardware."""
