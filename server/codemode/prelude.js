// The sandbox's bridge objects, made before the program runs. call,
// search and log are the host's functions; makeError makes the Error a
// failed tool call throws. Nothing here can reach the host but them.
(function (call, search, log) {
  "use strict";
  const stringify = JSON.stringify;
  const freeze = Object.freeze;
  const create = Object.create;
  const isArray = Array.isArray;
  const P = Proxy;
  const M = Map;
  const S = String;
  const readOnly = {
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
    setPrototypeOf() { return false; },
  };
  function argsOf(where, args) {
    if (args === undefined) return "{}";
    if (args === null || typeof args !== "object" || isArray(args)) {
      throw new TypeError(where + " takes one object of arguments, e.g. " + where + "({ ... })");
    }
    return stringify(args);
  }
  // pending is what a call returns: its promise, which says what to do
  // when the program reads a field of it (a missing await) instead of
  // giving undefined.
  const passed = { then: 1, catch: 1, finally: 1, constructor: 1 };
  function pending(where, p) {
    return new P(p, {
      get(target, key) {
        if (typeof key === "symbol") return target[key];
        if (passed[key] === 1) {
          const v = target[key];
          return typeof v === "function" ? function (...a) { return v.apply(target, a); } : v;
        }
        throw new TypeError(where + "(...) gives a Promise: write `await " + where + "(...)` to use its result (the program read ." + S(key) + " of the Promise)");
      },
    });
  }
  const fns = new M();
  function tool(d, t) {
    const key = d + "\u0000" + t;
    let f = fns.get(key);
    if (f === undefined) {
      const where = "tools." + d + "." + t;
      const run = async function (args) { return call(d, t, argsOf(where, args)); };
      f = freeze(function (args) { return pending(where, run(args)); });
      fns.set(key, f);
    }
    return f;
  }
  const domains = new M();
  function domain(d) {
    let p = domains.get(d);
    if (p === undefined) {
      p = new P(freeze(create(null)), Object.assign({
        get(_, t) { return typeof t === "string" && t !== "then" ? tool(d, t) : undefined; },
      }, readOnly));
      domains.set(d, p);
    }
    return p;
  }
  const tools = new P(freeze(create(null)), Object.assign({
    get(_, d) { return typeof d === "string" && d !== "then" ? domain(d) : undefined; },
  }, readOnly));
  function fmt(a) {
    if (typeof a === "string") return a;
    try {
      const s = stringify(a);
      return s === undefined ? S(a) : s;
    } catch (e) {
      return S(a);
    }
  }
  function logger(level) {
    return freeze(function (...args) { log(level, args.map(fmt).join(" ")); });
  }
  const console = freeze({
    log: logger(""), info: logger("info"), warn: logger("warn"), error: logger("error"), debug: logger("debug"),
  });
  const toolscout = freeze({
    search: freeze(async function (request, opts) {
      if (typeof request !== "string") {
        throw new TypeError('toolscout.search takes a request string, e.g. toolscout.search("send an email", {limit: 5})');
      }
      const limit = opts !== null && typeof opts === "object" && typeof opts.limit === "number" ? opts.limit : 0;
      return search(request, limit);
    }),
  });
  return freeze({ tools: tools, toolscout: toolscout, console: console });
})
