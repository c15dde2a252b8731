'use strict';
// The require hook of scripts/ts-register.js, under the name the benchmarks' commands use.
require('../../scripts/ts-register.js');
