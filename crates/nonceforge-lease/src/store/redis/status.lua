-- nonceforge lease protocol 2, Redis, status.
-- KEYS: the namespace's record, then each id's lease key and record, first to last.
-- ARGV: ns, first, last -> {protocol, incarnation, layout, {id, holder, token, pttl, floor}, ...}
-- ('' for a namespace without a record; layout 'standard' where the record has none;
-- a malformed record is an error). A wide range is asked for in chunks.
local first, last = tonumber(ARGV[2]), tonumber(ARGV[3])
local meta = KEYS[1]
if #KEYS ~= 1 + 2 * (last - first + 1) then
  return redis.error_reply('nonceforge: status got ' .. #KEYS .. ' keys for ids ' .. first .. '-' .. last)
end
local kind = redis.call('TYPE', meta)['ok']
local out = {'', '', ''}
if kind == 'hash' then
  local m = redis.call('HMGET', meta, 'protocol', 'incarnation', 'layout')
  out = {m[1] or '?', m[2] or '', m[3] or 'standard'}
elseif kind ~= 'none' then
  out = {'1', '', ''}
end
for id = first, last do
  local key, rec = KEYS[2 + 2 * (id - first)], KEYS[3 + 2 * (id - first)]
  local rk = redis.call('TYPE', rec)['ok']
  if rk ~= 'none' then
    local f = rk == 'hash' and redis.call('HMGET', rec, 'holder', 'token', 'floor')
    if not f or not f[2] or not f[3] or not string.match(f[2], '^%d+$') or not string.match(f[3], '^%d+$') then
      return redis.error_reply('nonceforge: ' .. rec .. ' is malformed')
    end
    table.insert(out, id); table.insert(out, f[1] or ''); table.insert(out, f[2])
    table.insert(out, redis.call('PTTL', key)); table.insert(out, f[3])
  end
end
return out
