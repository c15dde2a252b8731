'use strict';
// The require hook of scripts/ts-register.js, under the name the tests' child processes use.
require('../../scripts/ts-register.js');
