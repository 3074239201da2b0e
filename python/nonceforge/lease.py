"""Machine ids leased from PostgreSQL, Redis or etcd (docs/lease-protocol.md).

A member takes the lowest free machine id of a range (or exactly its
StatefulSet pod's index) and keeps it by renewing on the lease crate's own
thread; its generators stop the moment the lease may have lapsed, with no
Python running, and raise :class:`~nonceforge.DisabledError` at the next call.
The same stores, records and rules as the CLI, Go, Node and Elixir members,
so one range serves a mixed fleet::

    with Lease.acquire("redis://127.0.0.1:6379/0", namespace="orders") as lease:
        gen = lease.generator()
        nonce = gen.counter()

From asyncio, ``await Lease.acquire_async(...)`` runs the blocking part in a
thread; ``async with`` releases the same way.
"""

from __future__ import annotations

import asyncio
import atexit
import datetime
import functools
import logging
import threading
import weakref
from collections.abc import Callable
from types import TracebackType
from typing import Literal, Optional, Union

from nonceforge import _native
from nonceforge._errors import LeaseAllTakenError
from nonceforge._types import Readiness, Renewals, Sample

#: Where the machine id sits in the members' nonces.
Layout = Literal["standard", "wide"]

__all__ = ["Duration", "Lease", "LeaseEventCallback", "LeasePool"]

log = logging.getLogger("nonceforge")

#: A duration: seconds (int or float), a ``datetime.timedelta``, or the lease
#: crate's text (``"10s"``, ``"250ms"``, ``"2m"``).
Duration = Union[int, float, datetime.timedelta, str]

#: Called from the lease's watcher thread with the event's name ('renewed',
#: 'lapsed', 'resumed', 'lost', 'released') and the lease.
LeaseEventCallback = Callable[[str, "Lease"], None]

_held: weakref.WeakSet[Lease] = weakref.WeakSet()


def _release_at_exit() -> None:
    # (In a forked child, a lease of the parent's releases nothing: the native
    # handle knows it was taken before the fork.)
    for lease in list(_held):
        try:
            lease.release()
        except Exception:  # pragma: no cover - the store may be gone at exit
            log.warning("nonceforge: releasing the lease on machine id %s at exit failed", lease.machine_id)


atexit.register(_release_at_exit)


def _millis(name: str, value: Optional[Duration]) -> Optional[int]:
    """A duration argument in whole milliseconds (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be seconds, a timedelta or a duration text, not bool")
    if isinstance(value, str):
        seconds = _native.parse_duration(value)
    elif isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)):
        seconds = float(value)
    else:
        raise TypeError(f"{name} must be seconds, a timedelta or a duration text, not {type(value).__name__}")
    if not 0 <= seconds <= 2**53 / 1000:
        raise ValueError(f"{name} must be a finite duration >= 0, got {value!r}")
    return round(seconds * 1000)


def _ids(value: Union[tuple[int, int], str, None], layout: Layout) -> Optional[tuple[int, int]]:
    if value is None:
        return None
    if isinstance(value, str):
        return _native.parse_ids(value, layout)
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise TypeError("ids must be a (first, last) tuple of ints or a 'FIRST-LAST' text")
    first, last = value
    return _native.parse_ids(f"{first}-{last}", layout)


def _check_callback(on_event: Optional[LeaseEventCallback]) -> None:
    if on_event is not None and not callable(on_event):
        raise TypeError("on_event must be callable")


def _lease_options(
    url: str,
    *,
    ttl: Optional[Duration],
    renew_every: Optional[Duration],
    margin: Optional[Duration],
    connect_timeout: Optional[Duration],
    ids: Union[tuple[int, int], str, None],
    namespace: Optional[str],
    holder: Optional[str],
    pg_schema: Optional[str],
    fast_start: Optional[str],
    layout: Layout,
) -> dict[str, object]:
    """The native options of :meth:`Lease.acquire` and :class:`LeasePool`, checked."""
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    for name, text in (
        ("namespace", namespace),
        ("holder", holder),
        ("pg_schema", pg_schema),
        ("fast_start", fast_start),
        ("layout", layout),
    ):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a str, not {type(text).__name__}")
    return {
        "ttl_ms": _millis("ttl", ttl),
        "renew_every_ms": _millis("renew_every", renew_every),
        "margin_ms": _millis("margin", margin),
        "connect_timeout_ms": _millis("connect_timeout", connect_timeout),
        "ids": _ids(ids, layout),
        "namespace": namespace,
        "holder": holder,
        "pg_schema": pg_schema,
        "fast_start": fast_start,
        "layout": layout,
    }


class Lease:
    """A machine id held in a lease store. Make one with :meth:`acquire`
    (or :meth:`LeasePool.acquire`)."""

    def __init__(self, handle: _native.LeaseHandle, on_event: Optional[LeaseEventCallback] = None) -> None:
        self._handle = handle
        self._callbacks: list[LeaseEventCallback] = [] if on_event is None else [on_event]
        self._lock = threading.Lock()
        self._last_event: Optional[str] = None
        self._watcher = threading.Thread(target=self._watch, name="nonceforge-lease-watch", daemon=True)
        self._watcher.start()
        _held.add(self)

    @classmethod
    def acquire(
        cls,
        url: str,
        *,
        ttl: Optional[Duration] = None,
        renew_every: Optional[Duration] = None,
        margin: Optional[Duration] = None,
        connect_timeout: Optional[Duration] = None,
        ids: Union[tuple[int, int], str, None] = None,
        namespace: Optional[str] = None,
        holder: Optional[str] = None,
        pg_schema: Optional[str] = None,
        fast_start: Optional[str] = None,
        id_from: Optional[str] = None,
        id_wait: Optional[Duration] = None,
        layout: Layout = "standard",
        on_event: Optional[LeaseEventCallback] = None,
    ) -> Lease:
        """Take a machine id from the store at ``url`` (``postgres://``,
        ``redis://``, ``rediss://``, ``redis+sentinel://``, ``redis+cluster://``,
        ``etcd://``), blocking (the GIL released) until its generators may
        start: the TTL and margin after the grant (docs/lease-protocol.md,
        rule 3: a previous holder that lost touch has stopped by then), or at
        once with ``fast_start='verify'`` where the store vouches for the id's
        history.

        Every option is the lease crate's (None: its default): ``ttl``,
        ``renew_every``, ``margin``, ``connect_timeout`` (durations); ``ids``
        (the range, ``(first, last)`` or ``"0-99"``); ``namespace``, ``holder``,
        ``pg_schema``; ``fast_start`` ('off', 'verify', 'declared'). ``id_from``
        ('env:VAR', 'file:PATH' or 'hostname') takes exactly a StatefulSet
        pod's index, waiting up to ``id_wait`` (None: as long as it takes)
        while another member holds it. ``layout`` ('standard' or 'wide': ids
        0..65535, 96- and 128-bit nonces) is the members'; the namespace records
        it and refuses a member of the other one. ``on_event(name, lease)`` is
        called from the watcher thread on every change.
        """
        if id_from is not None and not isinstance(id_from, str):
            raise TypeError(f"id_from must be a str, not {type(id_from).__name__}")
        _check_callback(on_event)
        options = _lease_options(
            url,
            ttl=ttl,
            renew_every=renew_every,
            margin=margin,
            connect_timeout=connect_timeout,
            ids=ids,
            namespace=namespace,
            holder=holder,
            pg_schema=pg_schema,
            fast_start=fast_start,
            layout=layout,
        )
        wait_ms = _millis("id_wait", id_wait)
        if id_from is None:
            return cls(_native.LeaseHandle.acquire(url, **options), on_event)  # type: ignore[arg-type]
        # A pod's own id: tried once at once, so that a wait (the pod before
        # still holds it: a rolling update) is said before it starts.
        try:
            handle = _native.LeaseHandle.acquire(url, id_from=id_from, id_wait_ms=0, **options)  # type: ignore[arg-type]
        except LeaseAllTakenError:
            if wait_ms == 0:
                raise
            machine_id = _native.LeaseHandle.pod_index(id_from, layout)
            log.warning(
                "nonceforge: machine id %s (%s) is held by another member; waiting %s for it",
                machine_id,
                id_from,
                "as long as it takes" if wait_ms is None else f"up to {wait_ms} ms",
            )
            handle = _native.LeaseHandle.acquire(url, id_from=id_from, id_wait_ms=wait_ms, **options)  # type: ignore[arg-type]
        return cls(handle, on_event)

    @classmethod
    async def acquire_async(cls, url: str, **options: object) -> Lease:
        """:meth:`acquire` in a thread, for asyncio: the event loop is not blocked."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(cls.acquire, url, **options))  # type: ignore[arg-type]

    def _watch(self) -> None:
        while True:
            event = self._handle.wait_event(None)
            if event is None:  # pragma: no cover - no timeout was given
                continue
            with self._lock:
                self._last_event = event
                callbacks = list(self._callbacks)
            if event == "lost":
                log.warning(
                    "nonceforge: the lease on machine id %s was lost (%s); its generators stopped for good",
                    self.machine_id,
                    self.lost_reason,
                )
            elif event == "lapsed":
                log.warning(
                    "nonceforge: the lease on machine id %s lapsed; generators paused", self.machine_id
                )
            for callback in callbacks:
                try:
                    callback(event, self)
                except Exception:
                    log.exception("nonceforge: a lease on_event callback raised")
            if event in ("lost", "released"):
                return

    def on_event(self, callback: LeaseEventCallback) -> None:
        """Call ``callback(name, lease)`` on every change from now on (from the watcher thread)."""
        if not callable(callback):
            raise TypeError("callback must be callable")
        with self._lock:
            self._callbacks.append(callback)

    def generator(
        self, *, key: Optional[bytes] = None, epoch_unix_ms: Optional[int] = None
    ) -> _native.NonceGenerator:
        """A nonce generator on this lease's machine id: started above the
        previous holder's floor, stopped when the lease may have lapsed."""
        return _native.NonceGenerator._leased(self._handle, key=key, epoch_unix_ms=epoch_unix_ms)

    @property
    def machine_id(self) -> int:
        """The leased machine id."""
        return self._handle.machine_id

    @property
    def token(self) -> int:
        """The grant's fencing token."""
        return self._handle.token

    @property
    def floor_unix_ms(self) -> int:
        """The previous holder's last timestamp (Unix ms)."""
        return self._handle.floor_unix_ms

    @property
    def holder(self) -> str:
        """Who holds it, as the store shows it."""
        return self._handle.holder

    @property
    def backend(self) -> str:
        """The store, without its password."""
        return self._handle.backend

    @property
    def has_history(self) -> bool:
        """Whether the store had a record of the id (False: the start waited out the TTL and margin)."""
        return self._handle.has_history

    @property
    def started_fast(self) -> bool:
        """Whether the generators started right above the store's floor (fast_start)."""
        return self._handle.started_fast

    @property
    def state(self) -> str:
        """'held', 'lapsed', 'lost' or 'released'."""
        return self._handle.state()[0]

    @property
    def deadline_in(self) -> float:
        """Seconds until the local deadline while held (0 otherwise)."""
        return self._handle.state()[1]

    @property
    def lost_reason(self) -> Optional[str]:
        """Why the lease was lost ('taken', 'evicted', 'store', 'rollback'), or None."""
        return self._handle.lost_reason()

    def readiness(self) -> Readiness:
        """``Readiness(True, None)`` while its generators may issue, else why not."""
        why = self._handle.readiness()
        return Readiness(why is None, why)

    def renewals(self) -> Renewals:
        """Renewals so far and the last error while the latest failed."""
        return Renewals(*self._handle.renewals())

    def metrics(self) -> list[Sample]:
        """The lease's samples of the fleet's series (empty once released)."""
        return self._handle.metrics()

    def release(self) -> None:
        """Stop the generators, record their last timestamp and free the id (blocking; twice is a no-op)."""
        _held.discard(self)
        self._handle.release()

    async def release_async(self) -> None:
        """:meth:`release` in a thread, for asyncio."""
        await asyncio.get_running_loop().run_in_executor(None, self.release)

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.release()

    async def __aenter__(self) -> Lease:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.release_async()

    def __repr__(self) -> str:
        return f"Lease(machine_id={self.machine_id}, state={self.state!r}, backend={self.backend!r})"


class LeasePool:
    """Many leases of one namespace over a few shared store connections and
    one native thread, for a process that holds many machine ids (a worker,
    tenant or shard each): a connection a lease is more than a PostgreSQL
    server allows at that number. ::

        pool = LeasePool("postgres://app@db/app", conns=8, layout="wide")
        leases = [pool.acquire() for _ in range(1000)]

    Each lease it gives is a :class:`Lease` like any other (its own deadline,
    renewals, release; a watcher thread each). Its requests wait for a free
    connection within the request timeout, so a pool too small for its
    leases shows as renewal failures, never as a lease held past its
    deadline. The options are :meth:`Lease.acquire`'s (without ``id_from``);
    ``conns`` is the most connections kept (0: the lease crate's default, 8;
    at most 256). The store is checked now.
    """

    def __init__(
        self,
        url: str,
        *,
        conns: int = 0,
        ttl: Optional[Duration] = None,
        renew_every: Optional[Duration] = None,
        margin: Optional[Duration] = None,
        connect_timeout: Optional[Duration] = None,
        ids: Union[tuple[int, int], str, None] = None,
        namespace: Optional[str] = None,
        holder: Optional[str] = None,
        pg_schema: Optional[str] = None,
        fast_start: Optional[str] = None,
        layout: Layout = "standard",
    ) -> None:
        if isinstance(conns, bool) or not isinstance(conns, int):
            raise TypeError(f"conns must be an int, not {type(conns).__name__}")
        if conns < 0:
            raise ValueError(f"conns must be >= 0, got {conns}")
        options = _lease_options(
            url,
            ttl=ttl,
            renew_every=renew_every,
            margin=margin,
            connect_timeout=connect_timeout,
            ids=ids,
            namespace=namespace,
            holder=holder,
            pg_schema=pg_schema,
            fast_start=fast_start,
            layout=layout,
        )
        self._handle = _native.LeasePoolHandle.connect(url, conns, **options)  # type: ignore[arg-type]

    def acquire(self, *, on_event: Optional[LeaseEventCallback] = None) -> Lease:
        """Take a free machine id of the range, blocking (the GIL released)
        until its generators may start, as :meth:`Lease.acquire` does."""
        _check_callback(on_event)
        return Lease(self._handle.acquire(), on_event)

    async def acquire_async(self, *, on_event: Optional[LeaseEventCallback] = None) -> Lease:
        """:meth:`acquire` in a thread, for asyncio."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(self.acquire, on_event=on_event))

    @property
    def conns(self) -> int:
        """The most store connections the pool keeps."""
        return self._handle.conns

    def __repr__(self) -> str:
        return f"LeasePool(conns={self.conns})"
