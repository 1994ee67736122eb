// Minimal CouchDB-compatible test server: express-pouchdb 4.2.0 over
// PouchDB 7.3.1 with the in-memory adapter (no native modules).
// Env: COUCH_HOST (127.0.0.1), COUCH_PORT (15984), COUCH_ADMIN_USER/COUCH_ADMIN_PASS
// (optional: without them the server runs in "admin party" mode), COUCH_EXIT_ON_STDIN_EOF=1
// (exit when stdin closes). Started by tstest/couchtest (Go tests) or start.sh (by hand, CI).
'use strict';

// A few express-pouchdb code paths leak rejected promises (e.g. an
// unauthorised continuous _changes on a members-only db); don't die on them.
process.on('unhandledRejection', (err) => {
  console.error('[warn] unhandled rejection:', err && (err.message || err));
});

const express = require('express');
const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-memory'))
  .plugin(require('pouchdb-adapter-http'))
  .plugin(require('pouchdb-mapreduce'))
  .plugin(require('pouchdb-replication'));

const host = process.env.COUCH_HOST || '127.0.0.1';
const port = parseInt(process.env.COUCH_PORT || '15984', 10);
const user = process.env.COUCH_ADMIN_USER;
const pass = process.env.COUCH_ADMIN_PASS;

const MemPouch = PouchDB.defaults({ adapter: 'memory' });
const pouchApp = require('express-pouchdb')(MemPouch, {
  mode: 'fullCouchDB',
  // CouchDB does not gzip JSON responses; express' compression middleware
  // buffers streamed bodies, so a continuous _changes feed requested with
  // "Accept-Encoding: gzip" (Go's default transport, kivik) never flushes.
  overrideMode: { exclude: ['compression'] },
  inMemoryConfig: true,          // no config.json on disk
  logPath: process.env.COUCH_LOG || '/dev/null',
});

// pouchdb-server issue #374: once admins are configured, the security plugin makes PouchDB.new()
// return a Promise, while express-pouchdb's `PUT /db` route calls db.info() on the result and
// crashes. Wrap PouchDB.new (outermost, through the same wrapper mechanism the plugins use) so the
// route gets an object that waits for the promised database.
function acceptPromisedDatabases(PouchDB) {
  require('pouchdb-wrappers').installStaticWrapperMethods(PouchDB, {
    new: (original) => {
      const made = original();
      if (!made || typeof made.then !== 'function') return made;
      return { __opts: {}, info: (cb) => made.then((db) => db.info(cb), cb) };
    },
  });
}

function listen() {
  acceptPromisedDatabases(MemPouch);
  const app = express();
  app.use(pouchApp);
  const srv = app.listen(port, host, () => {
    // COUCH_PORT=0 picks a free port; the start script reads it from this line
    console.log(`listening on http://${host}:${srv.address().port}/ pid=${process.pid}`);
  });
  srv.on('error', (err) => { console.error(err.message); process.exit(1); });
  // in-memory only: nothing to flush, and close() would wait for open feeds
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // tstest/couchtest holds a pipe on stdin and never writes to it: EOF means the Go test
  // process is gone (even killed by a test timeout, which skips its cleanup), so go with it.
  if (process.env.COUCH_EXIT_ON_STDIN_EOF === '1') {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
}

if (user && pass) {
  // plaintext here; express-pouchdb hashes it (pbkdf2) like CouchDB does
  pouchApp.couchConfig.set('admins', user, pass, (err) => {
    if (err) { console.error(err); process.exit(1); }
    listen();
  });
} else {
  listen();
}
