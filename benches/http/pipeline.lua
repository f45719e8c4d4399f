-- wrk script: send DEPTH requests at once on each connection (HTTP/1.1
-- pipelining). Usage: wrk ... -s pipeline.lua URL -- DEPTH
init = function(args)
  local depth = tonumber(args[1]) or 10
  local requests = {}
  for i = 1, depth do
    requests[i] = wrk.format(nil, wrk.path)
  end
  pipelined = table.concat(requests)
end

request = function()
  return pipelined
end
