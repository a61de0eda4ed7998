"""The accountants' failures, one type each, as dp_accounting separates them: a caller can
tell an event no accountant of this kind can analyse from one that does not fit this
accountant's state, or a delta out of range. All are :class:`raudit.errors.ConfigError`
(one line at the CLI boundary), and each message carries the offending value."""

from __future__ import annotations

from raudit.errors import ConfigError


class AccountantError(ConfigError):
    """Base of the accountants' errors; a rejected event leaves the accountant unchanged."""


class UnsupportedEventError(AccountantError):
    """The accountant cannot analyse this event (its type, noise or parameters):
    ``supports(event)`` is False."""


class EventShapeError(AccountantError):
    """The event does not fit the accountant: another number of models, a bad mask."""


class DeltaError(AccountantError):
    """A delta outside (0, 1), or not one number or one per model."""


__all__ = ["AccountantError", "DeltaError", "EventShapeError", "UnsupportedEventError"]
