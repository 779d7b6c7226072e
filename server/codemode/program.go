package codemode

import (
	"errors"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// The program runs as the body of an async arrow function, so that it
// may await and return; its first line stays line 1.
const (
	wrapHead = "(async () => {"
	wrapTail = "\n})()"
)

// wrapProgram returns code as the body of an async function whose value
// is that of its return or, when its last statement is an expression,
// of that expression (as a REPL shows it).
func wrapProgram(code string) (string, error) {
	src := wrapHead + code + wrapTail
	file, err := parser.ParseFile(nil, "program.js", src, 0)
	if err != nil {
		return "", err
	}
	body, err := wrappedBody(file)
	if err != nil {
		return "", err
	}
	if len(body) == 0 {
		return src, nil
	}
	last, ok := body[len(body)-1].(*ast.ExpressionStatement)
	if !ok {
		return src, nil
	}
	// Idx0 and Idx1 are 1-based offsets into src.
	from, to := int(last.Expression.Idx0())-1, int(last.Expression.Idx1())-1
	if from < len(wrapHead) || to > len(src)-len(wrapTail) || from >= to {
		return src, nil
	}
	// A parenthesized start, "(await x).y", begins the expression but
	// not its node: take the parentheses in (a statement cannot end in
	// one, so they are this statement's).
	for j := from - 1; j >= len(wrapHead); j-- {
		if c := src[j]; c == '(' {
			from = j
		} else if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
	}
	return src[:from] + "return (" + src[from:to] + ")" + src[to:], nil
}

// wrappedBody returns the statements of the wrapper's function.
func wrappedBody(file *ast.Program) ([]ast.Statement, error) {
	if len(file.Body) != 1 {
		return nil, errors.New("the program closes the function it runs in (an unmatched '}'?)")
	}
	st, ok := file.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil, errors.New("the program closes the function it runs in (an unmatched '}'?)")
	}
	call, ok := st.Expression.(*ast.CallExpression)
	if !ok {
		return nil, errors.New("the program closes the function it runs in (an unmatched '}'?)")
	}
	fn, ok := call.Callee.(*ast.ArrowFunctionLiteral)
	if !ok {
		return nil, errors.New("the program closes the function it runs in (an unmatched '}'?)")
	}
	block, ok := fn.Body.(*ast.BlockStatement)
	if !ok {
		return nil, errors.New("the program closes the function it runs in (an unmatched '}'?)")
	}
	return block.List, nil
}
