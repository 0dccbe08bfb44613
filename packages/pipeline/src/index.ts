export * from './artifacts.js';
