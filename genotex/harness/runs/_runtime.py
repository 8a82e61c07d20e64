"""What a run cost, from its log: tokens (per model and per role), dollars and seconds, per
problem as the paper's Tables 2 and 3 report them.

The dollars come from a price table per model (`Prices`), a price for every model, or the
cost the log records, in that order; a sample is of unknown cost when one of its models is
priced by none of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...core import GenotexError, read_json

__all__ = ["Prices", "RuntimeSummary", "SampleRuntime", "runtime_summary", "sample_runtime"]

#: A price a model's million tokens may not pass (a typo, not a price).
_MAX_PRICE = 100_000.0


#: A price table entry's keys: the two prices every entry gives, and the cache's two, which
#: an entry may give (a cache read's price; a cache write's, the input price when not given).
_PRICE_KEYS = ("input", "output")
_CACHE_PRICE_KEYS = ("cached_input", "cache_write")


@dataclass(frozen=True)
class Prices:
    """Dollars per million input and output tokens: per model, and for every other model; and
    per model, where the table gives them, the prices of its prompt cache's reads and writes.
    """

    per_model: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    default: tuple[float, float] | None = None
    #: model -> (cache read, cache write) dollars per million tokens
    cache: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str | Path) -> Prices:
        """A price table file, `{"provider/model": {"input": dollars, "output": dollars}}`
        (per million tokens), each entry optionally with `"cached_input"` (a cache read's
        price) and `"cache_write"` (a cache write's; the input price when not given);
        anything else is refused in one sentence naming the file.
        """
        data = read_json(Path(path), GenotexError)
        if not isinstance(data, dict) or not data:
            raise GenotexError("is not a price table: an object of model -> prices", path=path)
        table, cache = {}, {}
        for model, price in data.items():
            if (not isinstance(price, dict) or not set(_PRICE_KEYS) <= set(price)
                    or not set(price) <= {*_PRICE_KEYS, *_CACHE_PRICE_KEYS}):  # fmt: skip
                raise GenotexError(
                    f'gives {str(model)[:80]!r} no {{"input": ..., "output": ...}} prices '
                    '(and, optionally, "cached_input" and "cache_write", nothing else)',
                    path=path,
                )
            pair = (_price(price["input"], model, path), _price(price["output"], model, path))
            table[str(model)] = pair
            if "cached_input" in price:
                read = _price(price["cached_input"], model, path)
                write = (
                    _price(price["cache_write"], model, path) if "cache_write" in price else None
                )
                cache[str(model)] = (read, pair[0] if write is None else write)
            elif "cache_write" in price:
                raise GenotexError(f"gives {str(model)[:80]!r} a cache_write price without "
                                   "its cached_input price", path=path)  # fmt: skip
        return cls(table, cache=cache)

    @classmethod
    def of(
        cls, table: str | Path | Prices | None, price_in: float | None, price_out: float | None
    ) -> Prices:
        """The prices export uses: a table (or its file) and the price for every model."""
        prices = table if isinstance(table, Prices) else cls() if table is None else cls.read(table)
        default = None
        if price_in is not None and price_out is not None:
            default = (_price(price_in, "--price-in", None), _price(price_out, "--price-out", None))
        return cls(prices.per_model, default or prices.default, prices.cache)

    def prices(self, model: str) -> bool:
        """Whether a price is known for `model` (its own, or the price for every model)."""
        return model in self.per_model or self.default is not None

    def cost(self, model: str, usage: Any) -> float | None:
        """Dollars of one model's usage: its price, the default, or the log's own cost.

        Cached input tokens (read from or written to a provider's prompt cache, which
        Inspect counts apart from `input_tokens`) are priced as input tokens: an upper
        bound where the provider discounts them, never the 10x undercount of leaving
        them out.
        """
        pair = self.per_model.get(model) or self.default
        if pair is not None:
            return (input_tokens(usage) * pair[0] + _tokens(usage, "output_tokens")
                    * pair[1]) / 1e6  # fmt: skip
        known = getattr(usage, "total_cost", None)
        if known is None:
            return None
        if isinstance(known, bool) or not isinstance(known, (int, float)):
            raise GenotexError(f"the log gives {model[:80]!r} a cost that is not a number")
        if not math.isfinite(known) or known < 0:
            raise GenotexError(f"the log gives {model[:80]!r} the cost {known}, not a cost")
        return float(known)

    def cost_cached(self, model: str, usage: Any) -> float | None:
        """Dollars of one model's usage as its provider bills a prompt cache: uncached input at
        the input price, cache reads at `cached_input`, cache writes at `cache_write`; None
        when the table gives the model no cache prices.
        """
        pair, cache = self.per_model.get(model) or self.default, self.cache.get(model)
        if pair is None or cache is None:
            return None
        reads, writes = _tokens(usage, CACHED_INPUT[0]), _tokens(usage, CACHED_INPUT[1])
        dollars = (_tokens(usage, "input_tokens") * pair[0] + reads * cache[0]
                   + writes * cache[1] + _tokens(usage, "output_tokens") * pair[1])  # fmt: skip
        return dollars / 1e6


def _price(value: object, model: object, path: str | Path | None) -> float:
    """A price in dollars a million tokens: finite, from 0 to `_MAX_PRICE` (`path`: the table
    it came from; None: an option).
    """
    where = f"gives {str(model)[:80]!r}" if path is not None else f"{model} is"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GenotexError(f"{where} a price that is not a number", path=path)
    number = float(value)
    if not math.isfinite(number) or not 0 <= number <= _MAX_PRICE:
        raise GenotexError(
            f"{where} the price {number:g}, outside 0 to {_MAX_PRICE:,.0f} dollars a million "
            "tokens",
            path=path,
        )
    return number


#: Inspect's counts of input tokens read from and written to a provider's prompt cache.
CACHED_INPUT = ("input_tokens_cache_read", "input_tokens_cache_write")


#: More tokens than any run spends (a quadrillion): a count past it is a forged log's
MAX_TOKENS = 10**15


def _tokens(usage: Any, name: str) -> int:
    """One token count of a log's usage: a whole number from 0 (a log is untrusted)."""
    value = getattr(usage, name, None)
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value > MAX_TOKENS:
        # before any repr or float: 10**5000 has no decimal text, 10**400 no float
        raise GenotexError(f"the log's {name} is a number of {value.bit_length():,} bits, "
                           f"more than the {MAX_TOKENS:,} tokens any run spends")  # fmt: skip
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GenotexError(f"the log's {name} is {value!r:.40}, not a count of tokens")
    return value


def input_tokens(usage: Any) -> int:
    """Every input token of a usage: uncached, and read from or written to the cache."""
    return _tokens(usage, "input_tokens") + sum(_tokens(usage, name) for name in CACHED_INPUT)


@dataclass(frozen=True)
class SampleRuntime:
    """What one sample of one epoch cost: did it finish and score, tokens, dollars, seconds;
    and its tokens (input, output) per model and per role (Inspect's `--model-role`).
    """

    sample: str
    epoch: int
    success: bool
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    seconds: float | None
    by_model: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    by_role: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: of `input_tokens`, those read from a provider's prompt cache, and those written to it
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: dollars as billed with the prompt cache (None: a model has no cache prices)
    cost_cached_usd: float | None = None


@dataclass(frozen=True)
class RuntimeSummary:
    """The run's Table 2 columns, per problem as the paper reports them, with the epochs' spread.

    `success` is the percentage of samples whose agent finished without an error
    or a limit and whose output scored; tokens are thousands per problem. `tokens_in_k`
    counts every input token, cached or not, and `cost_usd` prices them all at the input
    price, as the paper's Cost($) does; `cached_in_k` and `uncached_in_k` split the input
    (a provider's prompt cache reads against the rest), and `cost_cached_usd` is the cost
    as billed with the cache (None without cache prices for every model).
    """

    samples: int
    problems: int
    epochs: int
    success: float
    tokens_in_k: float
    tokens_out_k: float
    cost_usd: float | None
    time_s: float | None
    per_epoch: tuple[dict[str, float | None], ...] = ()
    #: thousands of (input, output) tokens per problem, per model and per role
    tokens_by_model: Mapping[str, dict[str, float]] = field(default_factory=dict)
    tokens_by_role: Mapping[str, dict[str, float]] = field(default_factory=dict)
    cached_in_k: float = 0.0
    uncached_in_k: float = 0.0
    cost_cached_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "per_epoch": [dict(e) for e in self.per_epoch],
            "tokens_by_model": {k: dict(v) for k, v in sorted(self.tokens_by_model.items())},
            "tokens_by_role": {k: dict(v) for k, v in sorted(self.tokens_by_role.items())},
        }


def _split(usage: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    return {str(name): (input_tokens(u), _tokens(u, "output_tokens")) for name, u in usage.items()}


def sample_runtime(sample: Any, success: bool, prices: Prices) -> SampleRuntime:
    """What one sample of one epoch cost, and whether the agent finished and its output scored."""
    usage = sample.model_usage or {}
    by_model = _split(usage)
    costs = [prices.cost(model, u) for model, u in usage.items()]
    cached = [prices.cost_cached(model, u) for model, u in usage.items()]
    return SampleRuntime(
        str(sample.id),
        int(sample.epoch or 1),
        success,
        sum(i for i, _ in by_model.values()),
        sum(o for _, o in by_model.values()),
        _all_known(costs),
        sample.working_time if sample.working_time is not None else sample.total_time,
        by_model,
        _split(getattr(sample, "role_usage", None) or {}),
        sum(_tokens(u, CACHED_INPUT[0]) for u in usage.values()),
        sum(_tokens(u, CACHED_INPUT[1]) for u in usage.values()),
        _all_known(cached),
    )


def _all_known(costs: list[float | None]) -> float | None:
    """The sum of costs, or None when there are none or one is unknown."""
    known = [c for c in costs if c is not None]
    return sum(known) if costs and len(known) == len(costs) else None


def _problems(rows: Iterable[SampleRuntime], problems_per_sample: Mapping[str, int]) -> int:
    """The problems the rows answered (a sample counts at least one), never 0."""
    return sum(max(1, problems_per_sample.get(r.sample, 1)) for r in rows) or 1


def _per_problem(values: list[float | None], problems: int) -> float | None:
    """The sum per problem, or None when any sample's value is unknown."""
    known = [v for v in values if v is not None]
    return sum(known) / problems if known and len(known) == len(values) else None


def runtime_summary(
    runtimes: Iterable[SampleRuntime], problems_per_sample: Mapping[str, int]
) -> RuntimeSummary:
    """Per-problem averages over samples (the paper's Tk., Cost, Time) and per epoch."""
    runtimes = list(runtimes)
    epochs = sorted({r.epoch for r in runtimes})

    def columns(rows: list[SampleRuntime]) -> dict[str, float | None]:
        problems = _problems(rows, problems_per_sample)
        costs = [r.cost_usd for r in rows]
        seconds = [r.seconds for r in rows]
        cached = sum(r.cache_read_tokens for r in rows)
        return {
            "success": 100.0 * sum(r.success for r in rows) / max(1, len(rows)),
            "tokens_in_k": sum(r.input_tokens for r in rows) / problems / 1000,
            "tokens_out_k": sum(r.output_tokens for r in rows) / problems / 1000,
            "cached_in_k": cached / problems / 1000,
            "uncached_in_k": (sum(r.input_tokens for r in rows) - cached) / problems / 1000,
            "cost_usd": _per_problem(costs, problems),
            "cost_cached_usd": _per_problem([r.cost_cached_usd for r in rows], problems),
            "time_s": _per_problem(seconds, problems),
        }

    per_epoch = tuple(columns([r for r in runtimes if r.epoch == e]) for e in epochs)
    overall = columns(runtimes)
    return RuntimeSummary(
        samples=len({r.sample for r in runtimes}),
        problems=sum(problems_per_sample.values()),
        epochs=len(epochs),
        success=overall["success"] or 0.0,
        tokens_in_k=overall["tokens_in_k"] or 0.0,
        tokens_out_k=overall["tokens_out_k"] or 0.0,
        cost_usd=overall["cost_usd"],
        time_s=overall["time_s"],
        per_epoch=per_epoch if len(epochs) > 1 else (),
        tokens_by_model=_per_name(runtimes, "by_model", problems_per_sample),
        tokens_by_role=_per_name(runtimes, "by_role", problems_per_sample),
        cached_in_k=overall["cached_in_k"] or 0.0,
        uncached_in_k=overall["uncached_in_k"] or 0.0,
        cost_cached_usd=overall["cost_cached_usd"],
    )


def _per_name(
    runtimes: list[SampleRuntime], which: str, problems_per_sample: Mapping[str, int]
) -> dict[str, dict[str, float]]:
    """Thousands of input and output tokens per problem, for each model (or role)."""
    problems = _problems(runtimes, problems_per_sample)
    totals: dict[str, list[int]] = {}
    for runtime in runtimes:
        for name, (tokens_in, tokens_out) in getattr(runtime, which).items():
            pair = totals.setdefault(name, [0, 0])
            pair[0] += tokens_in
            pair[1] += tokens_out
    return {
        name: {"tokens_in_k": i / problems / 1000, "tokens_out_k": o / problems / 1000}
        for name, (i, o) in sorted(totals.items())
    }
