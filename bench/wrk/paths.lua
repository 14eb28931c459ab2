-- wrk script: request the paths listed in a file (one a line), in turn, and print the
-- latency percentiles and counts as one JSON line when done.
--
--   wrk -t1 -c32 -d10s -s bench/wrk/paths.lua http://127.0.0.1:8000 -- paths.txt
--
-- Each thread starts at its own offset in the list, so threads do not ask for the same
-- record at the same moment.

local next_id = 0

function setup(thread)
  thread:set("thread_id", next_id)
  next_id = next_id + 1
end

function init(args)
  paths = {}
  for line in io.lines(args[1]) do
    if #line > 0 then
      paths[#paths + 1] = line
    end
  end
  position = ((thread_id or 0) * 7919) % #paths
end

function request()
  position = position % #paths + 1
  return wrk.format("GET", paths[position])
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"status_errors":%d,"socket_errors":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
