"""What a run leaves behind, the record worlds write and checkers read (layer 1).

    from history import History, Process, Clock, Event, Violation

Imports only model/ (the observation kinds): worlds (scenarios/) and checkers (checkers/)
both stand on it, so a world never imports a checker to reach the history type.
"""

from .record import Clock, History, Process, Violation
from .schema import FIELDS, Event, Sent, event, fields_of

__all__ = ["Clock", "History", "Process", "Violation", "Event", "Sent", "FIELDS", "event", "fields_of"]
