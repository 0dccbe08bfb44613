export { main, type Command } from './main.js';
