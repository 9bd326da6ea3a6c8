// Shard 2 of 2 of the typing sweep (tests/browser/typing-sweep.js says what it enters and checks): the test command
// runs the shards side by side. Run: node --test tests/browser/typing-2.test.js
import { typingSweep } from './typing-sweep.js';

typingSweep(1, 2);
