import { createServer } from 'node:http';
import { slugify } from './util.js';

export function serve(config) {
  createServer((req, res) => {
    res.end(slugify(config.name) + ' is up\n');
  }).listen(config.port);
}
