"""Training jobs run by ``ember train NAME`` (see ``ember.cli``)."""
from . import digits

JOBS = {"digits": digits}
