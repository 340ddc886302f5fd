-- SPDX-License-Identifier: Apache-2.0
-- wrk's summary as one machine-readable line for bench.py.  Only done() is
-- defined: a request() or response() callback would run Lua per request and
-- slow wrk, which shares the two cores with the server under test.
-- errors.status counts responses with a status above 399.
done = function(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "BENCH requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d "
      .. "status=%d timeout=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max))
end
