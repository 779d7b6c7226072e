import { readFileSync } from 'node:fs';

export function readConfig(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

export function slugify(s) {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}
