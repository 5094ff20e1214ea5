"""The one error the planner raises for a spec it cannot plan."""

from __future__ import annotations


class SpecError(Exception):
    """A spec that cannot be planned, with every problem found, keyed by field path.

    Field paths name the place in the spec, e.g. ``servers[1].hostname``,
    ``arrays[0].controller`` or ``filesystem``; the message says why the value is refused.
    """

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return "\n".join(f"{field}: {message}" for field, message in self.errors.items())
