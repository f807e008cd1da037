"""The money sections of the organisation config: `fx:` (rates into the reporting currency) and
`costs:` (rate cards, contracts, owned hardware and energy: cost lines no bill carries;
docs/config.md)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Any

from pydantic import Field, field_validator, model_validator

from pipelines.lib.config.section import MONTH, Money
from pipelines.lib.config.section import Section as _Section
from pipelines.lib.config.section import currency as _currency

class FxRate(_Section):
    currency: str
    month: str = Field(description="YYYY-MM")
    rate: Money = Field(gt=0, description="units of the reporting currency per unit of `currency`")
    source: str = Field(min_length=1, description="where the rate comes from, e.g. 'ECB monthly average'")

    _check_currency = field_validator("currency")(lambda cls, v: _currency(v))

    @field_validator("month", mode="before")
    @classmethod
    def _month(cls, value: Any) -> str:
        text = value.strftime("%Y-%m") if isinstance(value, date) else str(value)
        if not MONTH.match(text):
            raise ValueError(f"{text!r} is not a month (YYYY-MM)")
        return text


class FxConfig(_Section):
    reporting_currency: str = "USD"
    rates: list[FxRate] = Field(default_factory=list)

    _check_currency = field_validator("reporting_currency")(lambda cls, v: _currency(v))

    @model_validator(mode="after")
    def _one_rate_per_month(self) -> FxConfig:
        seen = set()
        for r in self.rates:
            if (r.currency, r.month) in seen:
                raise ValueError(f"two rates for {r.currency} in {r.month}")
            seen.add((r.currency, r.month))
        return self


class _NodeMatch(_Section):
    """Which nodes a cost entry covers: every matcher given must match (hostname, cluster, pool, GPU
    model as the inventory, bill tags or telemetry say); at least one is required."""

    hostname: str | None = None
    cluster: str | None = None
    pool: str | None = None
    gpu_model: str | None = None
    currency: str = "USD"  # written without one: the config's default_currency

    _check_currency = field_validator("currency")(lambda cls, v: _currency(v))

    @model_validator(mode="after")
    def _matches_something(self):
        if not any((self.hostname, self.cluster, self.pool, self.gpu_model)):
            raise ValueError("give at least one of hostname, cluster, pool, gpu_model: which nodes this entry costs")
        return self


class _Validity(_NodeMatch):
    valid_from: date | None = None   # first day it applies (inclusive); none: always
    valid_to: date | None = None     # last day it applies (inclusive); none: open-ended
    # whether the price pays for the power too; false: energy is priced on top (costs.energy)
    includes_power: bool = True

    @model_validator(mode="after")
    def _from_before_to(self):
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError(f"valid_to {self.valid_to} is before valid_from {self.valid_from}")
        return self


class RateCard(_Validity):
    price_per_gpu_hour: Money = Field(ge=0, description="price of one GPU for one hour")


class Contract(_Validity):
    amount_per_month: Money = Field(ge=0, description="fixed amount per calendar month, spread over its hours and the matched nodes' GPUs")


class OwnedHardware(_NodeMatch):
    purchase_price: Money = Field(ge=0, description="per node")
    purchase_date: date
    depreciation_months: int = Field(ge=1, le=600)
    residual: Money = Field(Decimal(0), ge=0)
    facility_per_node_month: Money = Field(Decimal(0), ge=0)

    @model_validator(mode="after")
    def _residual_below_price(self):
        if self.residual > self.purchase_price:
            raise ValueError(f"residual {self.residual} is above purchase_price {self.purchase_price}")
        return self


class HourPrice(_Section):
    from_hour: int = Field(ge=0, le=23)
    to_hour: int = Field(ge=1, le=24, description="exclusive")
    price_per_kwh: Money = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self):
        if self.to_hour <= self.from_hour:
            raise ValueError(f"to_hour {self.to_hour} is not after from_hour {self.from_hour}")
        return self


class EnergyConfig(_Section):
    price_per_kwh: Money = Field(Decimal(0), ge=0)
    # prices by UTC hour of day [from_hour, to_hour); hours not listed take price_per_kwh
    hourly_prices: list[HourPrice] = Field(default_factory=list)
    pue: Decimal = Field(Decimal(1), ge=1, le=5, description="facility power / IT power")
    kg_co2e_per_kwh: float = Field(0.0, ge=0, description="grid carbon intensity")
    currency: str = "USD"  # written without one: the config's default_currency

    _check_currency = field_validator("currency")(lambda cls, v: _currency(v))

    @model_validator(mode="after")
    def _hours_apart(self):
        hours = [h for p in self.hourly_prices for h in range(p.from_hour, p.to_hour)]
        if len(hours) != len(set(hours)):
            raise ValueError("hourly_prices overlap: each hour of the day may have one price")
        return self


class CostsConfig(_Section):
    """Cost sources other than a bill (docs/config.md#costs): they become cost lines like bill lines."""

    rate_cards: list[RateCard] = Field(default_factory=list)
    contracts: list[Contract] = Field(default_factory=list)
    owned: list[OwnedHardware] = Field(default_factory=list)
    energy: EnergyConfig = EnergyConfig()

    def entries_json(self) -> str:
        """Every rate card, contract and owned entry as one JSON array of flat records (the SQL reads it
        with from_json), amounts as exact decimal text."""
        out = []
        for kind, entries in (("rate_card", self.rate_cards), ("contract", self.contracts), ("owned", self.owned)):
            for i, e in enumerate(entries):
                d = e.model_dump(mode="json")
                out.append({"kind": kind, "idx": i, **{k: (str(v) if isinstance(v, Decimal) else v)
                                                        for k, v in d.items()}})
        return json.dumps(out)

    def hourly_energy_prices_json(self) -> str:
        """The energy price of each UTC hour of the day, 0..23, as decimal text."""
        by_hour = {h: str(p.price_per_kwh) for p in self.energy.hourly_prices for h in range(p.from_hour, p.to_hour)}
        return json.dumps({str(h): by_hour.get(h, str(self.energy.price_per_kwh)) for h in range(24)})
