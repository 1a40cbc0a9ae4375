-- wrk script for bench/http.py --flash: POST /api/flash-sales/{id}/{path}/purchase as many
-- players, once the sale is sold out.
--
--   wrk -t2 -c64 -d8s -s bench/flash.lua http://127.0.0.1:PORT -- PLAYERS_FILE SALE_ID THREADS
--
-- PLAYERS_FILE holds "TOKEN PATH" per line: a player's bearer token and the purchase path the
-- server gave them (paths are per player). Every request takes the next player (each thread
-- starts at a different place in the list). done() prints the same "BENCH_JSON {...}" line as
-- draw.lua.

local threads = {}

function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

local players = {}
local position = 0
statuses = {}

function init(args)
   for line in io.lines(args[1]) do
      local token, path = line:match("^(%S+) (%S+)$")
      if token then
         players[#players + 1] = {
            "Bearer " .. token, "/api/flash-sales/" .. args[2] .. "/" .. path .. "/purchase",
         }
      end
   end
   if #players == 0 then
      error("no players in " .. args[1])
   end
   position = math.floor(#players * id / tonumber(args[3] or 1)) % #players
end

function request()
   position = position % #players + 1
   local player = players[position]
   return wrk.format("POST", player[2], {
      ["Authorization"] = player[1],
      ["Content-Length"] = "0",
   })
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
