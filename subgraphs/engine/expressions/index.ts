/** n8n's expressions (`{{ … }}`, `={{ … }}`): parsed and rewritten here, evaluated in the sandbox against the items of a run. */

export { type BinaryData, type ExpressionData, ExpressionEngine, ExpressionError, type Item, parseTemplate } from './engine';
