module gofp

go 1.26
