package awsclient

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// TableNotFoundError is the error of a DynamoDB call on a table that does
// not exist: the service's ResourceNotFoundException (which says only
// "Requested resource not found", or on DynamoDB Local "Cannot do
// operations on a non-existent table") with the table names the call
// used. errors.As still finds the *types.ResourceNotFoundException.
type TableNotFoundError struct {
	// Operation is the API operation, e.g. "PutItem".
	Operation string
	// Tables are the table names the request named, sorted.
	Tables []string
	Err    error
}

func (e *TableNotFoundError) Error() string {
	which := "a table"
	switch len(e.Tables) {
	case 0:
	case 1:
		which = "table " + e.Tables[0]
	default:
		which = "one of the tables " + strings.Join(e.Tables, ", ")
	}
	return fmt.Sprintf("%s: %s does not exist: %v", e.Operation, which, e.Err)
}

// Unwrap returns the service error.
func (e *TableNotFoundError) Unwrap() error { return e.Err }

// nameMissingTables is a DynamoDB API option: it wraps a
// ResourceNotFoundException in a *TableNotFoundError naming the tables.
func nameMissingTables(st *middleware.Stack) error {
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("streamfold.NameMissingTables",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			var rnf *types.ResourceNotFoundException
			if err != nil && errors.As(err, &rnf) {
				err = &TableNotFoundError{Operation: middleware.GetOperationName(ctx), Tables: tableNames(in.Parameters), Err: err}
			}
			return out, md, err
		}), middleware.After)
}

// tableNames collects the table names of a DynamoDB request: TableName
// fields at any depth (transactions nest them) and the keys of
// RequestItems (batch calls).
func tableNames(params any) []string {
	var names []string
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > 4 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), depth)
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), depth+1)
			}
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				f, fv := t.Field(i), v.Field(i)
				switch {
				case !f.IsExported():
				case f.Name == "TableName" && fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String:
					if !fv.IsNil() {
						names = append(names, fv.Elem().String())
					}
				case f.Name == "RequestItems" && fv.Kind() == reflect.Map && fv.Type().Key().Kind() == reflect.String:
					for _, k := range fv.MapKeys() {
						names = append(names, k.String())
					}
				case fv.Kind() == reflect.Slice || fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct:
					walk(fv, depth+1)
				}
			}
		}
	}
	walk(reflect.ValueOf(params), 0)
	slices.Sort(names)
	return slices.Compact(names)
}
