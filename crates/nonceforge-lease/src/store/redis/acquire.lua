-- nonceforge lease protocol 2, Redis, acquire.
-- KEYS: the namespace's record, then each id's lease key and record, first to last
--   (every key passed in KEYS, one hash slot per namespace in a Redis Cluster).
-- ARGV: ns, first, last, ttl ms, cap, holder, grant id, incarnation if new
-- -> {id, token, floor ('-1': no record, no history), incarnation}, {-1} all taken,
--    or {-2, why} refused (another protocol, a malformed record).
local first, last = tonumber(ARGV[2]), tonumber(ARGV[3])
local meta = KEYS[1]
if #KEYS ~= 1 + 2 * (last - first + 1) then
  return {-2, 'acquire got ' .. #KEYS .. ' keys for ids ' .. first .. '-' .. last}
end
local kind = redis.call('TYPE', meta)['ok']
if kind == 'none' then
  redis.call('HSET', meta, 'protocol', '2', 'incarnation', ARGV[8], 'last', '0')
elseif kind ~= 'hash' then
  return {-2, meta .. ' is a ' .. kind .. ': members of lease protocol 1 use this namespace'}
end
local m = redis.call('HMGET', meta, 'protocol', 'incarnation', 'last')
if m[1] ~= '2' or not m[2] or not m[3] or not string.match(m[3], '^%d+$') then
  return {-2, meta .. ' is not a lease protocol 2 record (protocol ' .. tostring(m[1]) .. ')'}
end
for id = first, last do
  local key, rec = KEYS[2 + 2 * (id - first)], KEYS[3 + 2 * (id - first)]
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
    redis.call('HSET', key, 'grant', ARGV[7], 'holder', ARGV[6], 'token', token)
    redis.call('PEXPIRE', key, ARGV[4])
    local new = tonumber(ARGV[5])
    if floor ~= '-1' and tonumber(floor) > new then new = tonumber(floor) end
    redis.call('HSET', rec, 'grant', ARGV[7], 'holder', ARGV[6], 'token', token,
      'floor', string.format('%.0f', new))
    return {id, token, floor, m[2]}
  end
end
return {-1}
