"""The HTTP shapes of runtime switches and their audit."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from raffle.domain.switches import SwitchChange
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.examples import examples_of
from raffle.service.switches import Switch


class SwitchOut(BaseModel):
    model_config = examples_of(examples.SWITCH)

    name: str = Field(examples=["activity.100301.draws"])
    value: str = Field(description="What it is now in this process: `on`/`off`, or a number.")
    default: str = Field(description="What it is while no operator set it.")

    @classmethod
    def of(cls, s: Switch) -> SwitchOut:
        return cls(name=s.name, value=s.value, default=s.default)


class SwitchIn(BaseModel):
    model_config = examples_of(examples.SWITCH_IN)

    value: str = Field(max_length=16, examples=["off"])


class SwitchChangeOut(BaseModel):
    model_config = examples_of(examples.SWITCH_CHANGE)

    version: int
    name: str
    old: str
    new: str
    actor: str = Field(description="The operator who changed it.")
    at: datetime

    @classmethod
    def of(cls, c: SwitchChange) -> SwitchChangeOut:
        return cls(version=c.version, name=c.name, old=c.old, new=c.new, actor=c.actor, at=c.at)
