"""The native calls' threads: a bounded set of long-lived daemon workers (R-VEC-3).

A thread started per call cost its start-up on every DuckDB call (9 % of the event loop's
samples in a 20-agent turn soak) and left no bound on threads: each call the guard gave up
on kept its thread for as long as the native call hung. Here `size` workers take jobs in
order; a job the guard abandons (it did not settle within the grace period) may be replaced
by one more worker, up to `size + spare` threads in all — the bound, however many calls
hang. Past it, new jobs wait in the queue until a worker comes back, and the guard
withdraws a job still waiting when its deadline passes, so the caller hears
DeadlineExceeded on time instead of a quarantine. The threads are daemons: a hung native
call never holds up interpreter exit.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["Job", "Workers"]


class Job:
    """One native call: runs at most once, unless withdrawn before a worker takes it.
    `deliver` hears `run`'s return value once the worker is ready for its next job, so a
    caller that submits again at once finds it idle instead of starting another."""

    def __init__(self, run: Callable[[], object], deliver: Callable[[object], None]) -> None:
        self._run = run
        self._deliver = deliver
        self._lock = threading.Lock()
        self._state = "queued"  # -> "running" -> "done", or "queued" -> "withdrawn"

    def withdraw(self) -> bool:
        """Cancel the job if no worker has taken it; True when it will never run."""
        with self._lock:
            if self._state == "queued":
                self._state = "withdrawn"
            return self._state == "withdrawn"

    def _start(self) -> bool:
        with self._lock:
            if self._state != "queued":
                return False
            self._state = "running"
            return True

    def _finish(self) -> None:
        with self._lock:
            self._state = "done"


class Workers:
    """At most `size + spare` daemon threads; `abandoned` lends a spare for a hung job."""

    def __init__(self, *, size: int, spare: int, name: str) -> None:
        if size < 1 or spare < 0:
            raise ValueError("size must be >= 1 and spare >= 0")
        self._size, self._spare, self._name = size, spare, name
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # alive
        self._idle = 0  # alive and waiting for a job
        self._queued = 0  # submitted, not yet taken
        self._lent = 0  # spares lent to jobs the guard abandoned, still running
        self._abandoned: set[Job] = set()
        self._closed = False

    @property
    def threads(self) -> int:
        with self._lock:
            return self._threads

    def submit(self, job: Job) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("native workers are closed")
            self._queued += 1
            if self._idle < self._queued and self._threads < self._size + self._lent:
                self._threads += 1
                self._idle += 1
                threading.Thread(
                    target=self._serve, name=f"{self._name}-{self._threads}", daemon=True
                ).start()
        self._jobs.put(job)

    def abandoned(self, job: Job) -> None:
        """The guard gave up waiting for `job` (it hangs): another worker may serve the
        queue meanwhile, while fewer than `spare` are lent."""
        with self._lock:
            if job in self._abandoned or self._lent >= self._spare:
                return
            self._abandoned.add(job)
            self._lent += 1
        self._kick()

    def close(self) -> None:
        """Idle workers exit; one running a job exits after it. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = self._threads
        for _ in range(threads):
            self._jobs.put(None)

    def _kick(self) -> None:
        """Start a worker if jobs wait and the bound allows one."""
        with self._lock:
            if self._closed or self._idle >= self._queued:
                return
            if self._threads >= self._size + self._lent:
                return
            self._threads += 1
            self._idle += 1
        threading.Thread(target=self._serve, name=f"{self._name}-spare", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                if job is not None:
                    self._queued -= 1
            if job is None:
                with self._lock:
                    self._threads -= 1
                return
            outcome: tuple[object] | None = None
            if job._start():
                try:
                    outcome = (job._run(),)
                finally:
                    job._finish()
            with self._lock:
                if job in self._abandoned:
                    self._abandoned.discard(job)
                    self._lent -= 1
                leaving = self._threads > self._size + self._lent or self._closed
                if leaving:
                    self._threads -= 1  # a spare whose loan ended, or closing: exit
                else:
                    self._idle += 1
            if outcome is not None:
                job._deliver(outcome[0])
            if leaving:
                return
