-- SPDX-License-Identifier: Apache-2.0
-- wrk script for `make soak`: every route over many slugs in a fixed
-- rotation; counts the answers' statuses per thread.  GET only: wrk reads
-- a HEAD answer's Content-Length as a body to come.
local threads = {}
local rotation = {}

local function add(method, path)
  rotation[#rotation + 1] = wrk.format(method, path)
end

-- one round: 1000 posts, their cached pages, 30 tags, the index (plain and
-- cached), /compute, unknown slugs (404 from the database) and malformed
-- paths (404 without it); each route often enough to matter, /compute (the
-- CPU-bound one) rarely.  Built in init(): wrk.format needs wrk.host,
-- which the script's main chunk does not have yet.
local function build()
  for i = 1, 1000 do
    add("GET", "/post/post-" .. i)
    add("GET", "/post/post-" .. i .. "/cached")
    add("GET", "/tag/tag-" .. (i % 30 + 1))
    add("GET", i % 2 == 0 and "/" or "/cached")
    if i % 25 == 0 then add("GET", "/compute") end
    if i % 20 == 0 then add("GET", "/post/no-such-post-" .. i) end
    if i % 20 == 10 then add("GET", "/post/Bad_Slug_" .. i) end
  end
end

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  build()
  n200, n404, nother = 0, 0, 0
  -- threads start at different places in the rotation
  pos = (id * 977) % #rotation
end

function request()
  pos = pos % #rotation + 1
  return rotation[pos]
end

function response(status, headers, body)
  if status == 200 then n200 = n200 + 1
  elseif status == 404 then n404 = n404 + 1
  else nother = nother + 1 end
end

function done(summary, latency, requests)
  local a, b, c = 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("n200"); b = b + t:get("n404"); c = c + t:get("nother")
  end
  local expect404 = 0
  if #rotation == 0 then build() end
  for _, r in ipairs(rotation) do
    if r:find("no%-such%-post") or r:find("Bad_Slug") then expect404 = expect404 + 1 end
  end
  io.write(string.format("soak-statuses 200=%d 404=%d other=%d expected404share=%.5f\n",
                         a, b, c, expect404 / #rotation))
end
