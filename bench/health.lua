-- wrk script for bench/http.py: GET /api/health, the same server's trivial endpoint, for
-- comparison with the draw. No request()/response() hooks: wrk's fastest path. done() prints
-- the same "BENCH_JSON {...}" line as draw.lua (statuses: only the non-2xx count is known).

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, '
         .. '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "p999": %d, "max": %d}, '
         .. '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, '
         .. '"non_2xx": %d, "statuses": {}}\n',
      summary.requests, summary.duration, summary.bytes,
      latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency:percentile(99.9), latency.max,
      e.connect, e.read, e.write, e.timeout, e.status))
end
