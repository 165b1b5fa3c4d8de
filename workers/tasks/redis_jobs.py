"""The job registry in Redis: a hash per job, written in one round trip per step, and a wake-up list.

`gpugauge:job:{id}` holds {status, job (the record's JSON), enqueued, replay} with EXPIRE. Each step is
one script, one round trip: a submit claims the id, pushes the task's message onto its queue and
confirms it (_SUBMIT); a worker starts it (_START, sent without waiting for its answer, which is read
when the work is done: `start_soon`) and records its outcome (_FINISH), one round trip in all. _FINISH also
pushes a token onto `gpugauge:job:{id}:done`, which a client waiting for the job blocks on
(BLMOVE from the list to itself, so the token stays for every other waiter and any later one): no
sleeping and polling.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from redis import Redis
from redis.exceptions import RedisError

from workers.tasks.records import QUEUED, TERMINAL, PreparedTask, Record, Stored, decoded, dumps, with_outcome

log = logging.getLogger(__name__)

KEY_PREFIX = "gpugauge:job:"
DONE_SUFFIX = ":done"
LARGE_OUTCOME_CHARS = 1 << 20  # outcomes above this are written without the script (RedisJobStore.finish)

_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'job', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
return 1
"""
# Claim, publish and confirm at once: a job is never claimed without its message, nor the reverse.
# An id already held answers what is stored, so a repeated spec costs this one round trip too.
_SUBMIT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  local found = redis.call('HMGET', KEYS[1], 'status', 'job', 'enqueued')
  return {0, found[1], found[2], found[3]}
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'job', ARGV[2], 'enqueued', '1')
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'replay', ARGV[4]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('LPUSH', KEYS[3], ARGV[5])
return {1}
"""
# Mark a claimed job as handed to the queue, unless it expired meanwhile (never re-create a key), and
# keep the task's name and arguments, for workers/tasks/reconcile.py to enqueue again if the message is lost.
_CONFIRM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'enqueued', '1')
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'replay', ARGV[1]) end
return 1
"""
# Compare-and-set on the status, so a late or duplicate delivery cannot move a job backwards.
_ADVANCE = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'job', ARGV[3])
return 1
"""
_START = """
if redis.call('HGET', KEYS[1], 'status') ~= 'queued' then return 0 end
local record = cjson.decode(redis.call('HGET', KEYS[1], 'job'))
record['status'] = 'running'
record['updated_at'] = ARGV[1]
record['started_at'] = ARGV[1]
redis.call('HSET', KEYS[1], 'status', 'running', 'job', cjson.encode(record))
return 1
"""
# The outcome (ARGV[4], JSON) is spliced in as it is: the small record is decoded, the result never.
_FINISH = """
local record = cjson.decode(redis.call('HGET', KEYS[1], 'job') or ARGV[5])
record['result'] = nil
record['problem'] = nil
record['status'] = ARGV[1]
record['updated_at'] = ARGV[2]
local head = cjson.encode(record)
local job = string.sub(head, 1, -2) .. ',"' .. ARGV[3] .. '":' .. ARGV[4] .. '}'
local ttl = tonumber(record['expires_after_s']) or tonumber(ARGV[6])
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'job', job)
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], '1')
redis.call('EXPIRE', KEYS[2], ttl)
return 1
"""


# A review's chunk result, kept once (HSETNX: a redelivered chunk never counts twice); the job's progress
# moves by the chunk's jobs; the answer says whether every chunk is now in.
_ADD_CHUNK = """
local added = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
if added == 1 then
  redis.call('HINCRBY', KEYS[2], '_chunks', 1)
  local done = redis.call('HINCRBY', KEYS[2], '_jobs', ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  local status = redis.call('HGET', KEYS[1], 'status')
  if status == 'running' or status == 'queued' then
    local record = cjson.decode(redis.call('HGET', KEYS[1], 'job'))
    record['progress'] = {done = done, total = tonumber(ARGV[6])}
    record['updated_at'] = ARGV[7]
    redis.call('HSET', KEYS[1], 'job', cjson.encode(record))
  end
end
local chunks = tonumber(redis.call('HGET', KEYS[2], '_chunks') or '0')
if chunks >= tonumber(ARGV[4]) then return {added, 1} end
return {added, 0}
"""
CHUNKS_SUFFIX = ":chunks"


class RedisJobStore:
    """Job records as hashes {status, job} under `gpugauge:job:{id}`, with EXPIRE.

    `waiter` is the client blocking waits use: its socket timeout must exceed the longest wait.
    """

    def __init__(self, client: Redis, *, prefix: str = KEY_PREFIX, waiter: Redis | None = None) -> None:
        self._client = client
        self._waiter = waiter or client
        self._prefix = prefix
        self._claim = client.register_script(_CLAIM)
        self._submit = client.register_script(_SUBMIT)
        self._advance = client.register_script(_ADVANCE)
        self._confirm = client.register_script(_CONFIRM)
        self._start = client.register_script(_START)
        self._finish = client.register_script(_FINISH)
        self._add_chunk = client.register_script(_ADD_CHUNK)

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        key = self._key(record["id"])
        return bool(self._claim(keys=[key, key + DONE_SUFFIX], args=[record["status"], dumps(record), ttl_s]))

    def claim_and_publish(self, record: Record, *, ttl_s: int, task: PreparedTask,
                          replay: str | None = None) -> tuple[bool, Stored | None, bool]:
        """Claim the record and push its task in one round trip.

        Return (claimed, what is stored when not, whether that was confirmed enqueued).
        """
        key = self._key(record["id"])
        answer = self._submit(keys=[key, key + DONE_SUFFIX, task.queue_key],
                              args=[record["status"], dumps(record), ttl_s, replay or "", task.message])
        if int(answer[0]) == 1:
            return True, None, True
        status, job, enqueued = answer[1], answer[2], answer[3]
        stored = None if status is None or job is None else (_text(status), _text(job))
        return False, stored, enqueued is not None

    def get(self, job_id: str) -> Record | None:
        """Return the decoded record, or None for an unknown or expired id."""
        return decoded(self.get_stored(job_id))

    def get_stored(self, job_id: str) -> Stored | None:
        """Return (status, record JSON), or None for an unknown or expired id."""
        status, job = self._client.hmget(self._key(job_id), ["status", "job"])
        return None if status is None or job is None else (_text(status), _text(job))

    def wait_stored(self, job_id: str, *, timeout_s: float, known: Stored | None = None) -> Stored | None:
        """Return the job once done or failed, or as it is after `timeout_s`; None when unknown.

        `known` is what the caller just read (a submit's answer), saving the first read.
        """
        stored = known if known is not None else self.get_stored(job_id)
        if stored is None or stored[0] in TERMINAL or timeout_s <= 0:
            return stored
        key = self._key(job_id)
        # One round trip: block until the done token is there (at once if it already is), then read.
        pipe = self._waiter.pipeline(transaction=False)
        pipe.blmove(key + DONE_SUFFIX, key + DONE_SUFFIX, timeout_s, "RIGHT", "RIGHT")  # type: ignore[arg-type]
        pipe.hmget(key, ["status", "job"])
        _, (status, job) = pipe.execute()
        return None if status is None or job is None else (_text(status), _text(job))

    def start(self, job_id: str, *, at: str) -> bool:
        """Move a queued job to running (no-op if it moved on or expired)."""
        return bool(self._start(keys=[self._key(job_id)], args=[at]))

    def start_soon(self, job_id: str, *, at: str) -> Callable[[], bool]:
        """Send the start and return at once, with a call that reads its answer (True: moved to running).

        The job's work runs while the command travels, so a worker's start costs it no round trip: it
        reads the answer, long arrived, just before it records the outcome (which therefore reaches
        Redis after the start). The command goes as EVAL on a connection of its own: no script cache to
        miss, no other command's answer in between. A Redis lost before the answer is read leaves the
        start unknown (logged); the outcome written later makes it moot.
        """
        pool = self._client.connection_pool
        connection = pool.get_connection()
        try:
            connection.send_command("EVAL", _START, 1, self._key(job_id), at)  # type: ignore[no-untyped-call]
        except BaseException:
            connection.disconnect()  # type: ignore[no-untyped-call]
            pool.release(connection)
            raise

        def answer() -> bool:
            try:
                return bool(connection.read_response())
            except RedisError as error:
                connection.disconnect()  # type: ignore[no-untyped-call]
                log.warning("job %s: the answer to its start was lost (%s: %s); its outcome is recorded anyway",
                            job_id, type(error).__name__, error)
                return False
            finally:
                pool.release(connection)

        return answer

    def finish(self, job_id: str, *, status: str, outcome_json: str, at: str, fallback: Record) -> None:
        """Record the outcome on the job (on `fallback` if it expired) and wake whoever waits for it.

        An outcome over LARGE_OUTCOME_CHARS (a review of thousands of jobs: 14 MB a thousand) is spliced
        here and written in one MULTI transaction: passed through the script, copied by Lua and by Redis
        several times, a 140 MB document held Redis for 2 s (5 s and a timeout on a loaded machine). The
        record's head is read first; only the job's last step writes it then (a review's join, whose
        chunks are all in), so nothing moves it in between.
        """
        key = self._key(job_id)
        if len(outcome_json) > LARGE_OUTCOME_CHARS:
            head = self._client.hget(key, "job")
            record = json.loads(head) if head is not None else fallback
            ttl_s = int(record.get("expires_after_s") or fallback["expires_after_s"])
            pipe = self._client.pipeline(transaction=True)
            pipe.hset(key, mapping={"status": status, "job": with_outcome(record, status=status,
                                                                          outcome_json=outcome_json, at=at)})
            pipe.expire(key, ttl_s)
            pipe.delete(key + DONE_SUFFIX)
            pipe.rpush(key + DONE_SUFFIX, "1")
            pipe.expire(key + DONE_SUFFIX, ttl_s)
            pipe.execute()
            return
        self._finish(keys=[key, key + DONE_SUFFIX],
                     args=[status, at, "result" if status != "failed" else "problem", outcome_json,
                           dumps(fallback), int(fallback["expires_after_s"])])

    def add_chunk(self, job_id: str, *, index: int, payload: str, jobs: int, chunks: int, total_jobs: int,
                  at: str) -> tuple[bool, bool]:
        """Keep one chunk's result unless kept already; return (kept now, every chunk is in)."""
        key = self._key(job_id)
        expires = int(self._client.ttl(key))
        added, complete = self._add_chunk(
            keys=[key, key + CHUNKS_SUFFIX],
            args=[f"c{index}", payload, jobs, chunks, max(expires, 60), total_jobs, at])
        return bool(added), bool(complete)

    def has_chunk(self, job_id: str, *, index: int) -> bool:
        """Say whether the chunk's result is kept."""
        return bool(self._client.hexists(self._key(job_id) + CHUNKS_SUFFIX, f"c{index}"))

    def chunk_payloads(self, job_id: str) -> dict[int, str]:
        """Return every kept chunk's result by its index."""
        found = self._client.hgetall(self._key(job_id) + CHUNKS_SUFFIX)
        return {int(_text(name)[1:]): _text(value) for name, value in found.items() if _text(name).startswith("c")}

    def drop_chunks(self, job_id: str) -> None:
        """Forget the chunk results (the whole is recorded)."""
        self._client.delete(self._key(job_id) + CHUNKS_SUFFIX)

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        return bool(self._advance(keys=[self._key(job_id)], args=[expected_status, record["status"], dumps(record)]))

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`; a final one wakes its waiters."""
        key = self._key(record["id"])
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(key, mapping={"status": record["status"], "job": dumps(record)})
        pipe.expire(key, ttl_s)
        if record["status"] in TERMINAL:
            pipe.delete(key + DONE_SUFFIX)
            pipe.rpush(key + DONE_SUFFIX, "1")
            pipe.expire(key + DONE_SUFFIX, ttl_s)
        pipe.execute()

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        key = self._key(job_id)
        self._client.delete(key, key + DONE_SUFFIX, key + CHUNKS_SUFFIX)

    def confirm(self, job_id: str, *, replay: str | None = None) -> None:
        """Note that the job's task was enqueued, keeping `replay` (its task as JSON) when given."""
        self._confirm(keys=[self._key(job_id)], args=[replay or ""])

    def enqueued(self, job_id: str) -> bool:
        """Say whether the job's task was confirmed enqueued."""
        return self._client.hget(self._key(job_id), "enqueued") is not None

    def _key(self, job_id: str) -> str:
        return self._prefix + job_id


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


__all__ = ["KEY_PREFIX", "QUEUED", "RedisJobStore"]
