-- nonceforge lease protocol 2, Redis, acquire.
-- KEYS: the namespace's record, then each candidate id's lease key and record,
--   in the order of the ids in ARGV (every key passed in KEYS, one hash slot per
--   namespace in a Redis Cluster).
-- ARGV: ns, ttl ms, cap, holder, grant id, incarnation if new, layout
--   ('standard' or 'wide'), then the candidate ids: the whole range, lowest
--   first, or a sample of a wide one (docs/lease-protocol.md, "Finding a free id").
-- -> {id, token, floor ('-1': no record, no history), incarnation}: the first
--    candidate without a lease key; {-1} every candidate taken; {-2, why}
--    refused (another protocol, a malformed record); {-3, layout} the namespace
--    records another layout.
local meta = KEYS[1]
local n = #ARGV - 7
if n < 1 or #KEYS ~= 1 + 2 * n then
  return {-2, 'acquire got ' .. #KEYS .. ' keys for ' .. n .. ' ids'}
end
local layout = ARGV[7]
if layout ~= 'standard' and layout ~= 'wide' then
  return {-2, 'acquire got layout ' .. layout}
end
local kind = redis.call('TYPE', meta)['ok']
if kind == 'none' then
  redis.call('HSET', meta, 'protocol', '2', 'incarnation', ARGV[6], 'last', '0', 'layout', layout)
elseif kind ~= 'hash' then
  return {-2, meta .. ' is a ' .. kind .. ': members of lease protocol 1 use this namespace'}
end
local m = redis.call('HMGET', meta, 'protocol', 'incarnation', 'last', 'layout')
if m[1] ~= '2' or not m[2] or not m[3] or not string.match(m[3], '^%d+$') then
  return {-2, meta .. ' is not a lease protocol 2 record (protocol ' .. tostring(m[1]) .. ')'}
end
local recorded = m[4] or 'standard'
if recorded ~= layout then
  return {-3, recorded}
end
for i = 1, n do
  local id = ARGV[7 + i]
  if not string.match(id, '^%d+$') then
    return {-2, 'acquire got id ' .. id}
  end
  local key, rec = KEYS[2 * i], KEYS[2 * i + 1]
  if redis.call('EXISTS', key) == 0 then
    local floor = '-1'
    local rk = redis.call('TYPE', rec)['ok']
    if rk ~= 'none' then
      local f = rk == 'hash' and redis.call('HGET', rec, 'floor')
      if not f or not string.match(f, '^%d+$') then
        return {-2, rec .. ' is malformed (no decimal floor)'}
      end
      floor = f
    end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local token = string.format('%.0f', math.max(tonumber(m[3]) + 1, now * 1000))
    redis.call('HSET', meta, 'last', token)
    redis.call('HSET', key, 'grant', ARGV[5], 'holder', ARGV[4], 'token', token)
    redis.call('PEXPIRE', key, ARGV[2])
    local new = tonumber(ARGV[3])
    if floor ~= '-1' and tonumber(floor) > new then new = tonumber(floor) end
    redis.call('HSET', rec, 'grant', ARGV[5], 'holder', ARGV[4], 'token', token,
      'floor', string.format('%.0f', new))
    return {tonumber(id), token, floor, m[2]}
  end
end
return {-1}
