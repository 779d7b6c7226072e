// Preloaded (node --require) into a reference server started with
// PORT=0: says on stderr which port each of its servers bound, so that a
// test learns the address from the server itself instead of picking a
// free port first, which another process can take before the server
// binds it (issue 47).
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') {
      process.stderr.write(`toolscout-test: listening on port ${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};
