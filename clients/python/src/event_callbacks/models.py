"""The Open API's request and answer objects (generated: event_callbacks._generated.models)."""

from ._generated.models import *  # noqa: F403
from ._generated.models import __all__ as __all__
