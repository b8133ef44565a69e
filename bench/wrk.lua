-- The wrk side of the benchmark (bench/wrk.ts runs it): one scenario's
-- request, `depth` of them written at once on each connection (pipelining),
-- and a one-line JSON summary at the end for the runner to read.
--
--   wrk -t1 -c100 -d10s -s bench/wrk.lua http://127.0.0.1:PORT -- <depth> <method> <path> ["Name: value" ...] [@body=FILE]
--
-- With @body=FILE every request carries that file's bytes. A "{n}" in the
-- path becomes "<WRK_PREFIX>-<counter>", new for every request (a POST that
-- publishes under a new id each time), and new for every run.
--
-- wrk counts the requests in what request() returns and waits for that many
-- responses before it writes the next batch; it records one latency per
-- batch, from writing it to reading its last response (with depth 1, one per
-- request). Host comes from the URL (wrk.init sets it before init runs).

local batch, depth, method, path, body
local counter = 0
local prefix = os.getenv("WRK_PREFIX") or "w"

function init(args)
  depth = tonumber(args[1]) or 1
  method = args[2] or "GET"
  path = args[3] or "/"
  for i = 4, #args do
    local file = string.match(args[i], "^@body=(.*)$")
    if file ~= nil then
      local f = assert(io.open(file, "rb"))
      body = f:read("*a")
      f:close()
    else
      local name, value = string.match(args[i], "^([^:]+):%s*(.*)$")
      if name ~= nil then wrk.headers[name] = value end
    end
  end
  if not string.find(path, "{n}", 1, true) then batch = string.rep(wrk.format(method, path, nil, body), depth) end
end

function request()
  if batch ~= nil then return batch end
  local out = {}
  for i = 1, depth do
    counter = counter + 1
    out[i] = wrk.format(method, (string.gsub(path, "{n}", prefix .. "-" .. counter)), nil, body)
  end
  return table.concat(out)
end

-- The latency at each percentile in ps, from the distribution itself:
-- latency:percentile() sometimes answers 0 (wrk issues #236, #354: it ranks
-- against a sample count that its coordinated-omission correction has put
-- out of step with the distribution), so the ranks here come from the sum of
-- the distribution's own counts. #latency is the number of distinct values,
-- latency(i) the i-th value (µs, ascending) and how many samples had it.
local function percentiles(latency, ps)
  local total = 0
  for i = 1, #latency do
    local _, count = latency(i)
    total = total + count
  end
  local out, seen, k = {}, 0, 1
  for i = 1, #latency do
    local value, count = latency(i)
    seen = seen + count
    while k <= #ps and seen >= ps[k] / 100 * total do
      out[k] = value
      k = k + 1
    end
  end
  for j = k, #ps do out[j] = latency.max end
  return out
end

function done(summary, latency, requests)
  local e = summary.errors
  local p = percentiles(latency, { 50, 90, 99 })
  io.write(string.format(
    'WRK_SUMMARY {"requests":%d,"durationUs":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    p[1], p[2], p[3], latency.max, latency.mean))
end
