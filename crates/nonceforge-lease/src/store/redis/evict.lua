-- nonceforge lease protocol 2, Redis, evict (an operator frees an id; its floor stays).
-- KEYS: the id's lease key, the id's record.
-- ARGV: ns, id, holder or '' -> 1 evicted, 0 not held (by that holder).
local key, rec = KEYS[1], KEYS[2]
if redis.call('TYPE', rec)['ok'] ~= 'hash' then return 0 end
local holder = redis.call('HGET', rec, 'holder')
if not holder or holder == '' then return 0 end
if ARGV[3] ~= '' and holder ~= ARGV[3] then return 0 end
redis.call('DEL', key)
redis.call('HSET', rec, 'grant', '', 'holder', '')
return 1
