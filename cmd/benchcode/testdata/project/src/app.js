import { readConfig, slugify } from './util.js';
import { serve } from './server.js';

const config = readConfig('src/config.json');
console.log(`starting ${slugify(config.name)} on port ${config.port}`);
serve(config);
