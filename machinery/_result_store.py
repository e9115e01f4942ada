"""One run's computed results: each computed once, handed out explicitly to whoever asks.

A :class:`Product` names a computation, ``compute(store, **args) -> value``; :meth:`ResultStore.get`
returns its value for those arguments, computing it the first time it is asked for and handing out the
same value after that. Claims reach the run's store as ``ctx.store``
(:class:`~ropeproof.claims._registry.CheckContext`), figure functions take it as ``store=``, and a
product's own computation asks the store it is given for the products it builds on, so nothing a run
computes is computed twice and nothing is memoised behind the caller's back.

Two kinds of product:

- **data** (:func:`data_product`): JSON data (``dict`` with ``str`` keys, ``list``, ``str``, ``int``,
  ``float`` including NaN and infinities, ``bool``, ``None``; tuples and numpy scalars and arrays are
  converted to lists and Python numbers, anything else is refused). :meth:`ResultStore.get` hands
  out a fresh decoded copy every time: the caller may modify it, and a value is the same whether this
  process computed it, another process did, or it was read from a saved run.
- **object** (:func:`object_product`): anything (a loaded model, a compiled head, a sweep table),
  returned as is and **read-only by contract** (do not train it, move it or leave hooks on it). With a
  directory, a *shared* object (the default) is computed once for every process that shares the
  directory: the first asker pickles it into the directory's private :data:`OBJECTS` folder under the
  value's lock, and the others load that file. An object declared ``shared=False`` (a loaded
  checkpoint: reading it from disk costs no more than unpickling it) is computed once per process.

With a ``directory``, every data value is also written there, one JSON file per product and arguments
(atomically, :mod:`ropeproof.machinery._atomic_output`), and values already there are read instead of
computed. Two processes that share the directory (``ropeproof check`` shares its claims and figures
with a second process) therefore compute each data value once: a per-value file lock (the ``filelock``
package, :data:`LOCKS` inside the directory) makes the second asker wait for the first and then read its
file, or, inside :meth:`ResultStore.deferring`, raise :class:`ValueBusy` so that the asker can do other
work first.
Products may ask for other products while they compute; since what a product builds on never asks
for the product itself, the locks are taken in dependency order and cannot deadlock. With
``compute=False`` (:meth:`ResultStore.saved`) the store computes nothing: a data value its directory
lacks raises :class:`MissingResult`, and so does any object product. That is how a saved report's
figures are drawn again without recomputing (``ropeproof figures --from-report DIR``).

What stays memoised per process is not a run's result but part of how one function computes its own:
functions of a few numbers whose value is the same in every run (the symbolic derivations and proof
steps of :mod:`ropeproof.theory`, the torch kernel's rotation tables and masks, exact angle reductions
and code tables, sympy identities, the amplitude program of a spectrum, a head's gap enclosures),
each behind ``functools.cache``/``lru_cache`` or a dict next to the function.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import pickle
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from ropeproof.machinery._atomic_output import write_text_atomic
from ropeproof.machinery._errors import InputError

if TYPE_CHECKING:
    from ropeproof.machinery._result_cache import ResultCache

T = TypeVar("T")
Kind = Literal["data", "object"]

RESULT_FORMAT, RESULT_VERSION = "ropeproof-result", 1
"""Name and version of a saved value's file."""
LOCKS = ".locks"
"""The directory of per-value lock files inside a store's directory (:meth:`ResultStore.finish_run`)."""
OBJECTS = ".objects"
"""The directory of pickled shared objects inside a store's directory, private to one run."""
COMPUTED = ".computed"
"""The log of computations inside a store's directory: one line per computed value, from every process."""
FROM_CACHE = ".from-cache"
"""The log of values read from the cache of earlier runs instead of computed (same format)."""
NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")
"""A product name: lower-case letters, digits, ``_``, ``.`` and ``-`` (it names the product's files)."""
PACKAGE_NAMESPACES = ("beyond", "errata", "exact", "figure", "llm-eval", "multihop", "subjects", "training")
"""The first dotted parts of the package's product names: a product defined outside the package (a claims
file's) may not use them."""


class ValueBusy(BaseException):
    """Raised by a store that defers (:meth:`ResultStore.deferring`) instead of waiting for a value another
    process is computing: ``args[0]`` is the value's key. A ``BaseException``, like ``KeyboardInterrupt``,
    so that no ``except Exception`` on the way (a claim's error handling, a figure's) turns it into an
    error: it reaches whoever asked to defer, who does other work first and asks again later."""


class MissingResult(InputError):
    """A store that may not compute (a saved run) was asked for a value it does not hold."""


@dataclass(frozen=True)
class Product(Generic[T]):
    """A named computation: ``compute(store, **args)`` returns the value for ``args``; ``kind`` says how
    the store keeps it (module docstring). Names must be unique within the package (a test checks)."""

    name: str
    compute: Callable[..., T]
    kind: Kind = "data"
    shared: bool = True
    """For an object product: whether processes sharing a store directory share one computation."""

    def __post_init__(self) -> None:
        if not NAME.fullmatch(self.name):
            raise InputError(f"product name {self.name!r} must match {NAME.pattern}")
        if self.kind not in ("data", "object"):
            raise InputError(f"product {self.name!r}: kind={self.kind!r}; accepted: 'data', 'object'")
        module = str(getattr(self.compute, "__module__", None) or "")
        owner = "" if module == "ropeproof" or module.startswith("ropeproof.") else module or "?"
        if owner and self.name.split(".")[0] in PACKAGE_NAMESPACES:
            raise InputError(
                f"product name {self.name!r} (defined in {module}) shadows the package's products "
                f"{self.name.split('.')[0]}.*; the namespaces {list(PACKAGE_NAMESPACES)} are the "
                "package's own: name your product otherwise (e.g. 'mine.' + the rest)"
            )
        object.__setattr__(self, "owner", owner)

    owner: str = field(default="", init=False, compare=False)
    """The module that defined the product when it is not the package's own (a claims file's), else
    ``""``: part of every key of its values (:func:`result_key`), so what a claims file computes lives
    in its own namespace and never stands for a value of the package's."""


def data_product(name: str) -> Callable[[Callable[..., T]], Product[T]]:
    """Decorator: ``compute(store, **args)`` as a data :class:`Product` called ``name``."""
    return lambda compute: Product(name, compute, "data")


def object_product(name: str, shared: bool = True) -> Callable[[Callable[..., T]], Product[T]]:
    """Decorator: ``compute(store, **args)`` as an object :class:`Product` called ``name``; ``shared``:
    computed once for every process sharing the store's directory (module docstring)."""
    return lambda compute: Product(name, compute, "object", shared)


def to_json_data(value: Any, where: str = "value") -> Any:
    """``value`` as JSON data: tuples to lists, numpy scalars and arrays to Python numbers and lists;
    :class:`InputError` naming the place for anything else (a ``dict`` key that is not a ``str``
    included: JSON would turn it into text silently)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"{where} has the dict key {k!r}; JSON data needs str keys")
            out[k] = to_json_data(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, list | tuple):
        return [to_json_data(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy (or torch) scalars and arrays
        return to_json_data(value.tolist(), where)
    raise InputError(f"{where} is a {type(value).__name__}, not JSON data")


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=True, separators=(",", ":"))


def bound_arguments(product: Product[Any], args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with the defaults of ``product.compute`` filled in (so a value asked for with and without
    a default argument is one value); :class:`InputError` for an argument it does not take."""
    try:
        bound = inspect.signature(product.compute).bind(None, **args)
    except TypeError as exc:
        raise InputError(f"product {product.name!r}: {exc}") from None
    bound.apply_defaults()
    return dict(list(bound.arguments.items())[1:])


def result_key(product: Product[Any], args: dict[str, Any]) -> str:
    """The canonical text of a value's identity: the product's name and its arguments (defaults filled
    in, :func:`bound_arguments`) as sorted JSON."""
    full = to_json_data(bound_arguments(product, args), f"{product.name} arguments")
    return _prefix(product) + _dumps(dict(sorted(full.items())))


def _prefix(product: Product[Any]) -> str:
    """The start of a value's key: the product's name, after its owner for a product defined outside the
    package (:attr:`Product.owner`)."""
    return f"{product.owner}:{product.name}" if product.owner else product.name


def result_file(product: Product[Any], args: dict[str, Any]) -> str:
    """The file name of a saved value: the product's name and a hash of :func:`result_key`."""
    return _file_of(product, result_key(product, args))


def _file_of(product: Product[Any], key: str) -> str:
    return _file_named(product.name, key)


def _file_named(name: str, key: str) -> str:
    return f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"


class ResultStore:
    """The computed results of one run (module docstring).

    ``directory``: where data values are written and read (``None``: memory only). ``compute``: whether
    a value not held may be computed (``False``: :class:`MissingResult` instead). ``cache``: a
    :class:`~ropeproof.machinery._result_cache.ResultCache` of earlier runs' values, looked up before a data
    value or a shared object is computed and given what is computed.
    """

    def __init__(
        self, directory: str | Path | None = None, compute: bool = True, cache: ResultCache | None = None
    ) -> None:
        self.directory = None if directory is None else Path(directory)
        self.may_compute = bool(compute)
        self.cache = cache if self.may_compute else None
        if self.directory is not None and self.may_compute:
            self.directory.mkdir(parents=True, exist_ok=True)
        if self.directory is None and not self.may_compute:
            raise InputError("a store that may not compute needs a directory of saved results")
        self._texts: dict[str, str] = {}
        self._objects: dict[str, Any] = {}
        self._defer = False
        self._readings: list[dict[str, Kind]] = []
        self.computed: list[str] = []
        """The keys (:func:`result_key`) this store computed itself, in the order it finished them."""
        self.from_cache: list[str] = []
        """The keys this store read from its :class:`~ropeproof.machinery._result_cache.ResultCache`."""

    @classmethod
    def saved(cls, directory: str | Path) -> ResultStore:
        """The saved results in ``directory``, read-only: nothing is computed (:class:`MissingResult`)."""
        path = Path(directory)
        if not path.is_dir():
            raise InputError(f"{path} is not a directory of saved results")
        return cls(path, compute=False)

    def get(self, product: Product[T], **args: Any) -> T:
        """The value of ``product`` for ``args``, computed the first time it is asked for."""
        key = result_key(product, args)
        for reads in self._readings:
            reads[key] = product.kind
        if product.kind == "object":
            if key not in self._objects:
                self._refuse_if_read_only(product, key)
                self._objects[key] = self._object(product, args, key)
            return self._objects[key]
        if key not in self._texts:
            self._texts[key] = self._data_text(product, args, key)
        return json.loads(self._texts[key])["value"]

    @contextlib.contextmanager
    def reading(self) -> Iterator[dict[str, Kind]]:
        """Within this block, every value asked of this store (by whoever asks: a product's own
        computation included) is noted in the dict this yields, ``{key: kind}``: what a task read, that
        :mod:`ropeproof._task_cache` keys the task's outcome or files by."""
        reads: dict[str, Kind] = {}
        self._readings.append(reads)
        try:
            yield reads
        finally:
            self._readings = [r for r in self._readings if r is not reads]

    def held_text(self, key: str) -> str | None:
        """The JSON text of the data value ``key`` as this store handed it out, or ``None`` when it has
        not been asked for."""
        return self._texts.get(key)

    def adopt_text(self, key: str, text: str) -> None:
        """Hold ``text``, the JSON text of the data value ``key`` read from the cache of earlier runs
        (checked by the caller), as if it had been asked for: written to the directory (when it has
        none yet) and logged as read from the cache (:data:`FROM_CACHE`)."""
        if key in self._texts:
            return
        if self.directory is not None:
            name = key.split("{", 1)[0].rsplit(":", 1)[-1]  # the product name, after its owner if any
            path = self.directory / _file_named(name, key)
            if not path.is_file():
                write_text_atomic(path, text)
        self._texts[key] = text
        self._record(key, FROM_CACHE)

    @contextlib.contextmanager
    def deferring(self) -> Iterator[None]:
        """Within this block, asking for a value that another process sharing the directory is computing
        raises :class:`ValueBusy` instead of waiting for it (``ropeproof check``'s two processes then take
        other work first, :mod:`ropeproof._check_pool`)."""
        previous, self._defer = self._defer, True
        try:
            yield
        finally:
            self._defer = previous

    @contextlib.contextmanager
    def _locked(self, path: Path, key: str) -> Iterator[None]:
        """Hold the file lock ``path`` of value ``key``: wait for it, or, when :meth:`deferring`, raise
        :class:`ValueBusy` if another process holds it."""
        from filelock import FileLock, Timeout

        lock = FileLock(str(path))
        try:
            lock.acquire(timeout=0 if self._defer else -1)
        except Timeout:
            raise ValueBusy(key) from None
        try:
            yield
        finally:
            lock.release()

    def _refuse_if_read_only(self, product: Product[Any], key: str) -> None:
        if not self.may_compute:
            raise MissingResult(
                f"the saved results in {self.directory} do not hold {key} and may not compute it "
                f"({product.kind} product {product.name!r})"
            )

    def _object(self, product: Product[Any], args: dict[str, Any], key: str) -> Any:
        if self.directory is None or not product.shared:
            value = product.compute(self, **args)
            self.computed.append(key)  # not logged: a per-process object is computed once per process
            return value
        path = self.directory / OBJECTS / (_file_of(product, key)[: -len(".json")] + ".pickle")
        if path.is_file():  # another process of this run computed it (written whole: moved into place)
            return pickle.loads(path.read_bytes())
        (self.directory / LOCKS).mkdir(exist_ok=True)
        with self._locked(self.directory / LOCKS / (path.stem + ".object.lock"), key):
            if path.is_file():  # another process of this run computed it
                return pickle.loads(path.read_bytes())
            value = self._computed_object(product, args, key)
            import cloudpickle  # pickles the closures objects carry (a sweep table's witnesses)

            try:
                data = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError):
                # not shareable after all: another process computes it again, which the log shows
                return value
            path.parent.mkdir(exist_ok=True)
            staged = path.with_name(f".{path.name}.{os.getpid()}")
            staged.write_bytes(data)
            staged.replace(path)
            return value

    def _computed_object(self, product: Product[Any], args: dict[str, Any], key: str) -> Any:
        if self.cache is not None:
            from ropeproof.machinery._result_cache import MISSING

            cached = self.cache.get_object(key)
            if cached is not MISSING:
                self._record(key, FROM_CACHE)
                return cached
        value = product.compute(self, **args)
        self._record(key)
        if self.cache is not None:
            self.cache.put_object(key, value)
        return value

    def _record(self, key: str, log_name: str = COMPUTED) -> None:
        """Note that this process computed ``key`` (or read it from the cache, ``log_name`` =
        :data:`FROM_CACHE`): :attr:`computed` or :attr:`from_cache`, and the directory's log."""
        (self.computed if log_name == COMPUTED else self.from_cache).append(key)
        if self.directory is not None:
            # one short line per write: appends of one write(2) each do not interleave on a local disk
            with open(self.directory / log_name, "a", encoding="utf-8") as log:
                log.write(key + "\n")

    def computation_counts(self, log_name: str = COMPUTED) -> Counter[str]:
        """How often each value was computed by the processes sharing this store's directory (this
        store's own :attr:`computed` without a directory); with ``log_name`` = :data:`FROM_CACHE`, how
        often each was read from the cache instead."""
        if self.directory is None:
            return Counter(self.computed if log_name == COMPUTED else self.from_cache)
        log = self.directory / log_name
        return Counter(log.read_text(encoding="utf-8").splitlines() if log.is_file() else [])

    def _data_text(self, product: Product[Any], args: dict[str, Any], key: str) -> str:
        if self.directory is None:
            return self._computed_text(product, args, key)
        path = self.directory / _file_of(product, key)
        if path.is_file():
            return self._read(path, key)
        self._refuse_if_read_only(product, key)
        locks = self.directory / LOCKS
        locks.mkdir(exist_ok=True)
        with self._locked(locks / (path.stem + ".lock"), key):
            if path.is_file():  # another process computed it while this one waited
                return self._read(path, key)
            text = self._computed_text(product, args, key)
            write_text_atomic(path, text)
            return text

    def _computed_text(self, product: Product[Any], args: dict[str, Any], key: str) -> str:
        if self.cache is not None:
            cached = self.cache.get_text(key)
            if cached is not None:
                self._record(key, FROM_CACHE)
                return cached
        value = to_json_data(product.compute(self, **args), product.name)
        entry = {
            "format": RESULT_FORMAT,
            "version": RESULT_VERSION,
            "product": _prefix(product),  # the owner too, for a product from outside the package
            "args": json.loads(key[len(_prefix(product)) :]),
            "value": value,
        }
        self._record(key)
        text = _dumps(entry)
        if self.cache is not None:
            self.cache.put_text(key, text)
        return text

    @staticmethod
    def _read(path: Path, key: str) -> str:
        """The text of the saved value file ``path``, checked to be a complete result file of ``key``
        (an :class:`InputError` naming the file otherwise: truncated, not JSON, another value's)."""
        try:
            text = path.read_text(encoding="utf-8")
            entry = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(
                f"{path} is not a complete {RESULT_FORMAT} file ({type(exc).__name__}: {exc}); it was "
                "truncated or altered"
            ) from None
        if not isinstance(entry, dict) or (entry.get("format"), entry.get("version")) != (
            RESULT_FORMAT,
            RESULT_VERSION,
        ):
            raise InputError(f"{path} is not a {RESULT_FORMAT} v{RESULT_VERSION} file")
        missing = [k for k in ("product", "args", "value") if k not in entry]
        if missing:
            raise InputError(
                f"{path} is not a complete {RESULT_FORMAT} file (no {', '.join(missing)}); it was altered"
            )
        product, args = entry["product"], entry["args"]
        if not isinstance(product, str) or product + _dumps(args) != key:
            raise InputError(f"{path} holds {product}{_dumps(args)}, not {key}")
        return text

    def saved_keys(self) -> list[str]:
        """The keys of the data values in the directory (sorted; empty without a directory)."""
        if self.directory is None:
            return []
        keys = []
        for path in sorted(self.directory.glob("*.json")):
            entry = json.loads(path.read_text())
            keys.append(entry["product"] + _dumps(entry["args"]))
        return sorted(keys)

    def finish_run(self) -> None:
        """Delete the lock files, the pickled objects and the computation log (once no other process
        uses the directory): a finished run keeps only its JSON values."""
        if self.directory is not None:
            shutil.rmtree(self.directory / LOCKS, ignore_errors=True)
            shutil.rmtree(self.directory / OBJECTS, ignore_errors=True)
            (self.directory / COMPUTED).unlink(missing_ok=True)
            (self.directory / FROM_CACHE).unlink(missing_ok=True)

    def __repr__(self) -> str:
        where = "memory" if self.directory is None else str(self.directory)
        return f"ResultStore({where}, {len(self._texts)} data, {len(self._objects)} objects)"
