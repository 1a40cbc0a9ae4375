-- wrk script for bench/http.py: POST /api/activities/{id}/draws as many users.
--
--   wrk -t2 -c64 -d20s -s bench/draw.lua http://127.0.0.1:PORT -- TOKENS_FILE ACTIVITY_ID RUN_ID THREADS
--
-- TOKENS_FILE holds one bearer token per line (one user each). Every request takes the next
-- token (each thread starts at a different place in the list) and a unique Idempotency-Key
-- (RUN_ID, the thread and a counter). done() prints one line "BENCH_JSON {...}" with the
-- request count, duration, latency percentiles (microseconds), socket errors and the count
-- of responses per HTTP status, which bench/http.py parses.

local threads = {}

function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

local tokens = {}
local path = nil
local run_id = nil
local position = 0
local sent = 0
statuses = {}

function init(args)
   path = "/api/activities/" .. args[2] .. "/draws"
   for line in io.lines(args[1]) do
      if #line > 0 then
         -- Each token's request made once, up to its Idempotency-Key (the blank line that
         -- ends wrk.format's headers taken off): request() only appends the key, so the
         -- load generator, on the same cores as the server, costs about what health.lua does.
         local made = wrk.format("POST", path, {
            ["Authorization"] = "Bearer " .. line,
         })
         tokens[#tokens + 1] = made:sub(1, -3) .. "Idempotency-Key: "
      end
   end
   if #tokens == 0 then
      error("no tokens in " .. args[1])
   end
   run_id = args[3] .. "-t" .. id .. "-"
   -- Threads start spread over the list, so they rarely draw as the same user at once.
   position = math.floor(#tokens * id / tonumber(args[4] or 1)) % #tokens
end

function request()
   sent = sent + 1
   position = position % #tokens + 1
   return tokens[position] .. run_id .. sent .. "\r\n\r\n"
end

function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
   local counts = {}
   for _, thread in ipairs(threads) do
      local seen = thread:get("statuses")
      if seen then
         for status, n in pairs(seen) do
            counts[status] = (counts[status] or 0) + n
         end
      end
   end
   local parts = {}
   for status, n in pairs(counts) do
      parts[#parts + 1] = string.format('"%d": %d', status, n)
   end
   local e = summary.errors
   io.write(string.format(
      'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, '
         .. '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "p999": %d, "max": %d}, '
         .. '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, '
         .. '"non_2xx": %d, "statuses": {%s}}\n',
      summary.requests, summary.duration, summary.bytes,
      latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99),
      latency:percentile(99.9), latency.max,
      e.connect, e.read, e.write, e.timeout, e.status, table.concat(parts, ", ")))
end
