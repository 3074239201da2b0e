// The V8 half of nonceforge's zero-copy pool jobs (see src/bulk/pin.rs).
//
// Node-API can keep a buffer's *object* alive but not its memory: JavaScript
// may detach the ArrayBuffer (transfer it to a worker, structuredClone with
// transfer, ArrayBuffer.prototype.transfer) and its new owner may free it
// while a pool thread still reads or writes it. V8's BackingStore is the
// memory's owner: a std::shared_ptr to it, taken at the call, keeps the bytes
// allocated whatever happens to the ArrayBuffer, and is dropped when the job
// ends. That is the whole of this file.
//
// It uses V8's C++ API, whose ABI changes with every Node major, so it is a
// separate shared object built per NODE_MODULE_VERSION (node/scripts/
// build-v8.js) and opened with dlopen by the addon only when the running
// Node's `process.versions.modules` is the one it was built for; elsewhere
// the addon copies (Node-API alone). The addon itself stays Node-API only.
#include <v8.h>
#include <node_version.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#define NF_EXPORT extern "C" __attribute__((visibility("default")))

using Store = std::shared_ptr<v8::BackingStore>;

// The NODE_MODULE_VERSION these headers are: the addon compares it with the
// running Node's before it calls anything else here.
NF_EXPORT int nonceforge_v8_abi(void) { return NODE_MODULE_VERSION; }

// Pins the memory of `value`, which must be a napi_value of an ArrayBuffer or
// SharedArrayBuffer, passed during a Node-API call on the isolate's thread (a
// HandleScope is open). A napi_value is the slot pointer of a v8::Local: that
// is how Node's Node-API implementation converts them (v8impl::
// V8LocalValueFromJsValue), in every version that has Node-API.
//
// Returns an owner to release with nonceforge_v8_unpin, and writes the
// memory's start, its length now, and whether JavaScript may resize it; or
// returns null (nothing pinned) when `value` is neither kind of buffer or
// memory for the owner is short.
NF_EXPORT void* nonceforge_v8_pin(void* value, void** data, size_t* length, int* resizable) {
  v8::Local<v8::Value> local;
  static_assert(sizeof(local) == sizeof(value), "a Local is one pointer");
  std::memcpy(static_cast<void*>(&local), &value, sizeof(value));
  Store store;
  if (local->IsArrayBuffer()) {
    store = local.As<v8::ArrayBuffer>()->GetBackingStore();
  } else if (local->IsSharedArrayBuffer()) {
    store = local.As<v8::SharedArrayBuffer>()->GetBackingStore();
  }
  if (!store) return nullptr;
  *data = store->Data();
  *length = store->ByteLength();
  *resizable = store->IsResizableByUserJavaScript() ? 1 : 0;
  // malloc and placement new: no C++ runtime library beyond the headers.
  void* owner = std::malloc(sizeof(Store));
  if (owner == nullptr) return nullptr;
  return new (owner) Store(std::move(store));
}

// Releases an owner from nonceforge_v8_pin (once). When it was the last
// owner — the ArrayBuffer was detached and dropped meanwhile — the memory is
// freed here, through the allocator the isolate shares with its backing
// stores (Node creates isolates with array_buffer_allocator_shared).
NF_EXPORT void nonceforge_v8_unpin(void* owner) {
  static_cast<Store*>(owner)->~Store();
  std::free(owner);
}
