-- SPDX-License-Identifier: Apache-2.0
-- bench/freshness.py's load: the cached routes named in FRESH_PATHS, in
-- turn, and wrk's summary as one machine-readable line.
local paths = {}
for p in string.gmatch(os.getenv("FRESH_PATHS") or "/cached", "%S+") do
   paths[#paths + 1] = p
end
local i = 0
request = function()
   i = i + 1
   return wrk.format("GET", paths[i % #paths + 1])
end
done = function(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "FRESH requests=%d duration_us=%d connect=%d read=%d write=%d "
      .. "status=%d timeout=%d p50_us=%d p99_us=%d\n",
      summary.requests, summary.duration, e.connect, e.read, e.write,
      e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
