-- The wrk side of the benchmark (bench/wrk.ts runs it): one scenario's
-- request, `depth` of them written at once on each connection (pipelining),
-- and a one-line JSON summary at the end for the runner to read.
--
--   wrk -t1 -c100 -d10s -s bench/wrk.lua http://127.0.0.1:PORT -- <depth> <method> <path> ["Name: value" ...]
--
-- wrk counts the requests in what request() returns and waits for that many
-- responses before it writes the next batch; it records one latency per
-- batch, from writing it to reading its last response (with depth 1, one per
-- request). Host comes from the URL (wrk.init sets it before init runs).

local batch

function init(args)
  local depth = tonumber(args[1]) or 1
  local method = args[2] or "GET"
  local path = args[3] or "/"
  for i = 4, #args do
    local name, value = string.match(args[i], "^([^:]+):%s*(.*)$")
    if name ~= nil then wrk.headers[name] = value end
  end
  batch = string.rep(wrk.format(method, path), depth)
end

function request()
  return batch
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_SUMMARY {"requests":%d,"durationUs":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
